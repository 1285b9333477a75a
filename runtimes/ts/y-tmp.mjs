import { parseAllDocuments, LineCounter, isScalar, isMap, isSeq, isAlias, isPair } from "yaml";
const src = process.argv[2];
const lc = new LineCounter();
const docs = parseAllDocuments(src, { version: "1.2", schema: "core", uniqueKeys: false, merge: false, lineCounter: lc, keepSourceTokens: false, strict: true, prettyErrors: false });
console.log(Array.isArray(docs) ? docs.length : "empty", docs.errors);
for (const d of (Array.isArray(docs)?docs:[])) {
  console.log("errors", d.errors.map(e=>[e.code,e.message,e.pos]), "warnings", d.warnings.map(e=>[e.code,e.message]));
  const walk=(n,ind)=>{ if(isScalar(n)) console.log(ind, JSON.stringify({type:n.type, source:n.source, value:n.value, tag:n.tag, range:n.range, pos: lc.linePos(n.range[0])}));
   else if(isMap(n)) { console.log(ind,"map tag",n.tag, n.range); for(const p of n.items){ walk(p.key, ind+" K"); walk(p.value, ind+"  ");} }
   else if(isSeq(n)) { console.log(ind,"seq tag",n.tag); for(const c of n.items) walk(c, ind+"  "); }
   else if(isAlias(n)) console.log(ind,"alias",n.source, n.range);
   else console.log(ind, "other", n);
  };
  walk(d.contents,"");
}
