// The oracle of tags_diff_test.go: tree-sitter's own tags queries, run by
// web-tree-sitter over each grammar's published WebAssembly build.
//
// stdin: {"modules": DIR, "lang": L, "files": [PATH...]}
// stdout: one JSON line per file: {"file", "error"?, "tags": [{kind, name,
// node, parent, start, end, nameLine}]}: lines 1-based and inclusive.
import fs from 'node:fs';
import path from 'node:path';

const grammars = {
  go: ['tree-sitter-go', 'tree-sitter-go.wasm', ['tree-sitter-go/queries/tags.scm']],
  python: ['tree-sitter-python', 'tree-sitter-python.wasm', ['tree-sitter-python/queries/tags.scm']],
  javascript: ['tree-sitter-javascript', 'tree-sitter-javascript.wasm', ['tree-sitter-javascript/queries/tags.scm']],
  // TypeScript's tags are JavaScript's and its own (the grammar's
  // tree-sitter.json lists both).
  typescript: ['tree-sitter-typescript', 'tree-sitter-typescript.wasm', ['tree-sitter-javascript/queries/tags.scm', 'tree-sitter-typescript/queries/tags.scm']],
  tsx: ['tree-sitter-typescript', 'tree-sitter-tsx.wasm', ['tree-sitter-javascript/queries/tags.scm', 'tree-sitter-typescript/queries/tags.scm']],
  java: ['tree-sitter-java', 'tree-sitter-java.wasm', ['tree-sitter-java/queries/tags.scm']],
  c: ['tree-sitter-c', 'tree-sitter-c.wasm', ['tree-sitter-c/queries/tags.scm']],
  cpp: ['tree-sitter-cpp', 'tree-sitter-cpp.wasm', ['tree-sitter-cpp/queries/tags.scm']],
  csharp: ['tree-sitter-c-sharp', 'tree-sitter-c_sharp.wasm', ['tree-sitter-c-sharp/queries/tags.scm']],
  rust: ['tree-sitter-rust', 'tree-sitter-rust.wasm', ['tree-sitter-rust/queries/tags.scm']],
  ruby: ['tree-sitter-ruby', 'tree-sitter-ruby.wasm', ['tree-sitter-ruby/queries/tags.scm']],
  php: ['tree-sitter-php', 'tree-sitter-php.wasm', ['tree-sitter-php/queries/tags.scm']],
  // The bash grammar ships no tags query: its one definition form.
  shell: ['tree-sitter-bash', 'tree-sitter-bash.wasm', []],
};
const shellTags = '(function_definition name: (word) @name) @definition.function';

const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const [pkg, wasm, queries] = grammars[input.lang];
// web-tree-sitter from the oracle's own install, not this file's folder.
const { Parser, Language, Query } = await import(path.join(input.modules, 'web-tree-sitter', 'web-tree-sitter.js'));
await Parser.init();
const lang = await Language.load(path.join(input.modules, pkg, wasm));
const parser = new Parser();
parser.setLanguage(lang);
const source = queries.length ? queries.map(q => fs.readFileSync(path.join(input.modules, q), 'utf8')).join('\n') : shellTags;
const query = new Query(lang, source);

// A node's last line: one ending at column 0 ends on the line before.
const lastLine = n => (n.endPosition.column === 0 && n.endPosition.row > n.startPosition.row ? n.endPosition.row : n.endPosition.row + 1);

for (const file of input.files) {
  const out = { file, tags: [] };
  // A definition two patterns tag (Rust's function_item as a method and
  // as a function) counts once.
  const seen = new Set();
  const defs = [];
  try {
    const tree = parser.parse(fs.readFileSync(file, 'utf8'));
    for (const m of query.matches(tree.rootNode)) {
      let def, kind, name;
      for (const c of m.captures) {
        if (c.name.startsWith('definition.')) { def = c.node; kind = c.name.slice(11); }
        else if (c.name === 'name') name = c.node;
      }
      if (!def || !name) continue;
      const node = def.type;
      // C and C++ tag a function's declarator (its name and parameters):
      // the block is the definition or declaration holding it.
      if (node === 'function_declarator') {
        let p = def.parent;
        while (p && /declarator$/.test(p.type)) p = p.parent;
        if (p) def = p;
        if (def.parent && def.parent.type === 'template_declaration') def = def.parent;
      }
      const key = `${def.startIndex}:${name.startIndex}`;
      if (seen.has(key)) continue;
      seen.add(key);
      // var f = function f() {}: two tags of one definition, the
      // variable's holding the function's, their names on one line.
      const nameLine = name.startPosition.row + 1;
      if (defs.some(d => d.name === name.text && d.nameLine === nameLine && d.from <= def.startIndex && def.endIndex <= d.to ||
        d.name === name.text && d.nameLine === nameLine && def.startIndex <= d.from && d.to <= def.endIndex)) continue;
      defs.push({ name: name.text, nameLine, from: def.startIndex, to: def.endIndex });
      // A class, struct or enum named without its body (class X; enum
      // X y;) is a reference the query takes for a definition.
      const bodiless = /_specifier$/.test(node) && !def.childForFieldName('body');
      out.tags.push({ kind, name: name.text, node, bodiless, hasError: def.hasError, parent: def.type === node ? (def.parent ? def.parent.type : '') : def.type,
        start: def.startPosition.row + 1, end: lastLine(def), nameLine });
    }
    // Where tree-sitter could not parse (macros it does not expand):
    // its tags there are guesses.
    out.errors = [];
    const errs = n => {
      if (n.type === 'ERROR' || n.isMissing) { out.errors.push([n.startPosition.row + 1, lastLine(n)]); return; }
      if (!n.hasError) return;
      for (const c of n.children) errs(c);
    };
    errs(tree.rootNode);
    // Code tree-sitter reads as tokens only (a Rust macro's body):
    // definitions Outline finds there are not the tags query's to see.
    if (input.lang === 'rust') {
      out.opaque = [];
      const walk = n => {
        if (n.type === 'macro_invocation' || n.type === 'macro_definition' || n.type === 'token_tree') {
          out.opaque.push([n.startPosition.row + 1, lastLine(n)]);
          return;
        }
        for (const c of n.namedChildren) walk(c);
      };
      walk(tree.rootNode);
    }
    tree.delete();
  } catch (e) {
    out.error = String(e && e.message || e);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
