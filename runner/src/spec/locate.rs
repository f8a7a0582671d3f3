//! Finds where a key path sits in a YAML source, for messages about values
//! that parse but make no sense (serde reports positions only for errors it
//! raises itself).
//!
//! Block-style YAML only, which is what specs/ is written in: a key is found
//! as `key:` at a deeper indentation than its parent. Where the walk fails
//! the caller falls back to the parent's line, then to line 1.

/// A 1-based line and column in a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

/// The location of the deepest key of `path` that can be found.
pub fn locate(source: &str, path: &[&str]) -> Location {
    let mut found = Location { line: 1, column: 1 };
    let mut from_line = 0usize;
    let mut parent_indent: Option<usize> = None;
    'keys: for key in path {
        for (index, line) in source.lines().enumerate().skip(from_line) {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = line.len() - trimmed.len();
            if let Some(p) = parent_indent {
                if indent <= p {
                    break;
                }
            }
            let bare = trimmed.trim_start_matches("- ");
            if bare
                .strip_prefix(*key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
            {
                found = Location {
                    line: index + 1,
                    column: indent + (trimmed.len() - bare.len()) + 1,
                };
                from_line = index + 1;
                parent_indent = Some(indent);
                continue 'keys;
            }
        }
        break;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "id: E19\nserver:\n  threads: 2\nmodes:\n  releasing:\n    path: /a\n  holding:\n    path: /b\n";

    #[test]
    fn finds_nested_keys() {
        assert_eq!(
            locate(SRC, &["server", "threads"]),
            Location { line: 3, column: 3 }
        );
        assert_eq!(
            locate(SRC, &["modes", "holding", "path"]),
            Location { line: 8, column: 5 }
        );
    }

    #[test]
    fn falls_back_to_the_deepest_found_parent() {
        assert_eq!(
            locate(SRC, &["modes", "holding", "nope"]),
            Location { line: 7, column: 3 }
        );
        assert_eq!(locate(SRC, &["nothing"]), Location { line: 1, column: 1 });
    }

    #[test]
    fn does_not_take_a_sibling_subtree() {
        // `path` under releasing must not satisfy a search under holding.
        let src = "modes:\n  releasing:\n    path: /a\n  holding:\n    role: control\n";
        assert_eq!(
            locate(src, &["modes", "holding", "path"]),
            Location { line: 4, column: 3 }
        );
    }
}
