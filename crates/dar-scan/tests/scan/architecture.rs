//! The crate's module graph has no circle: every `use crate::…`,
//! `use super::…` and inline `crate::…` path of a source file is an edge
//! to the file that defines it (re-exports of `lib.rs` resolved to their
//! modules; comments and inline `#[cfg(test)] mod tests` left out), and
//! the graph of
//! files must be acyclic. A stage that imported the context while the
//! context imported stage state was such a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as a module path (`stages/dv`, `lib`).
fn files(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            files(&path, &format!("{prefix}{name}/"), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((format!("{prefix}{name}"), path));
        }
    }
}

/// The module (file) a path of segments below the crate root lands in.
fn module_of(segments: &[&str], known: &BTreeSet<String>) -> Option<String> {
    let mut found = None;
    let mut current = String::new();
    for s in segments {
        let candidate = if current.is_empty() {
            (*s).to_string()
        } else {
            format!("{current}/{s}")
        };
        if known.contains(&candidate) {
            found = Some(candidate.clone());
        } else if known.contains(&format!("{candidate}/mod")) {
            found = Some(format!("{candidate}/mod"));
        } else {
            break;
        }
        current = candidate;
    }
    found
}

/// `a::{b::C, d}` expanded to `a::b::C`, `a::d`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(&format!("{prefix}{}", p.trim())))
        .collect()
}

/// The trees of a file's `use` items (`[pub[(crate)]] use TREE;` at the
/// start of a line).
fn use_trees(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut offset, mut skip_until) = (0, 0);
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        if line_start < skip_until {
            continue;
        }
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let Some(after) = ["pub(crate) use ", "pub use ", "use "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p))
        else {
            continue;
        };
        let start = line_start + indent + (trimmed.len() - after.len());
        let end = text[start..].find(';').map_or(text.len(), |e| start + e);
        out.push(&text[start..end]);
        skip_until = end;
    }
    out
}

/// The paths a file names, each as segments from the crate root.
fn paths(module: &str, text: &str) -> Vec<Vec<String>> {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    // Doc links and comments name items without importing them.
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    let text = code.as_str();
    let parent: Vec<&str> = {
        let mut p: Vec<&str> = module.split('/').collect();
        p.pop(); // the file itself
        p
    };
    let mut out = Vec::new();
    for tree in use_trees(text) {
        for full in expand(tree) {
            let full = full.split(" as ").next().unwrap().trim().to_string();
            let segs: Vec<&str> = full.split("::").map(str::trim).collect();
            let from_root: Option<Vec<String>> = match segs.first() {
                Some(&"crate") => Some(segs[1..].iter().map(|s| s.to_string()).collect()),
                Some(&"super") => {
                    // `super` of `a/b/mod` and of `a/b/c` is `a/b`'s parent
                    // module for mod.rs files, `a/b` otherwise.
                    let mut base: Vec<String> = parent.iter().map(|s| s.to_string()).collect();
                    if module.ends_with("/mod") {
                        base.pop();
                    }
                    base.extend(segs[1..].iter().map(|s| s.to_string()));
                    Some(base)
                }
                _ => None,
            };
            out.extend(from_root);
        }
    }
    // Inline paths: `crate::a::b::f(...)`.
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + 7..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        out.push(rest[..end].split("::").map(str::to_string).collect());
    }
    out
}

#[test]
fn no_module_imports_itself_through_others() {
    let mut all = Vec::new();
    files(&src(), "", &mut all);
    let known: BTreeSet<String> = all.iter().map(|(m, _)| m.clone()).collect();
    // lib.rs re-exports: name -> defining module.
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut reexports: BTreeMap<String, String> = BTreeMap::new();
    for path in paths("lib", &lib) {
        let segs: Vec<&str> = path.iter().map(String::as_str).collect();
        if let (Some(m), Some(name)) = (module_of(&segs, &known), segs.last()) {
            reexports.insert((*name).to_string(), m);
        }
    }
    for tree in use_trees(&lib) {
        for full in expand(tree) {
            let segs: Vec<&str> = full.split("::").map(str::trim).collect();
            if let (Some(m), Some(name)) = (module_of(&segs, &known), segs.last()) {
                reexports.insert((*name).to_string(), m);
            }
        }
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &all {
        if module == "lib" || module == "tests" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for path in paths(module, &text) {
            let segs: Vec<&str> = path.iter().map(String::as_str).collect();
            let target = match module_of(&segs, &known) {
                Some(t) => Some(t),
                None => segs.first().and_then(|n| reexports.get(*n).cloned()),
            };
            if let Some(t) = target.filter(|t| t != module) {
                edges.entry(module.clone()).or_default().insert(t);
            }
        }
    }
    // A module's own submodules (declared with `mod x;`) may use it back
    // only through `super`, which is an edge like any other.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = stack.iter().position(|s| s == m) {
            panic!("import circle: {} -> {m}", stack[at..].join(" -> "));
        }
        stack.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, stack, done);
        }
        stack.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        visit(m, &edges, &mut Vec::new(), &mut done);
    }
    // The graph is not trivially empty: the stages use the state.
    assert!(
        edges["execution/stages/decode"].contains("execution/state"),
        "{edges:?}"
    );
    assert!(edges.len() > 20, "{edges:?}");
}
