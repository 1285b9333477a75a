// Vitest's reporter calls Map.groupBy (Node 21+) when it prints failed tests; on Node 20 it throws
// instead, and the failure's message is lost. Loaded with --require by `make test-web`.
if (typeof Map.groupBy !== "function") {
  Map.groupBy = function groupBy(items, keyOf) {
    const groups = new Map();
    let i = 0;
    for (const item of items) {
      const key = keyOf(item, i++);
      const group = groups.get(key);
      if (group) group.push(item);
      else groups.set(key, [item]);
    }
    return groups;
  };
}
