declare module "jsdom";
