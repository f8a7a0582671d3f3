//! Untrusted text (server replies) made safe to put in a message.
//!
//! A server's body can be anything up to the reply cap: megabytes, a
//! multi-byte character cut in half, control characters, terminal escapes.
//! [`clip`] is the one way such text enters a reason, a report or a log
//! line: short, on one line, and never cut inside a character (slicing a
//! `str` off a char boundary panics, which is how a reply of 300 "€" once
//! crashed the runner). [`clip_bytes`] does the same for raw bytes, invalid
//! UTF-8 included, decoding only what it keeps.

pub mod table;

/// The ellipsis marking a clipped text.
pub const ELLIPSIS: char = '…';

/// `text` cut to at most `max_bytes` bytes on a character boundary; when
/// anything was cut, followed by "…" and the original length
/// (`"€€… (900 bytes)"`). Control characters (newlines, escapes) are shown
/// escaped (`\n`, `\u{1b}`), so the result stays on one line and cannot
/// drive a terminal; the escapes may add to the length, at most tenfold.
pub fn clip(text: &str, max_bytes: usize) -> String {
    clip_bytes(text.as_bytes(), max_bytes)
}

/// [`clip`] for bytes that may not be UTF-8 (a reply body): invalid bytes
/// read as U+FFFD, and the length given is the bytes' own. Only the kept
/// head is decoded, so a megabyte body costs what a short one does.
pub fn clip_bytes(bytes: &[u8], max_bytes: usize) -> String {
    let cut = bytes.len() > max_bytes;
    // A character is at most 4 bytes: decoding this far decides the last
    // one the head keeps. A character cut by this window starts past
    // `max_bytes`, and decoding never moves text left, so it is clipped.
    let window = &bytes[..bytes.len().min(max_bytes.saturating_add(4))];
    let text = String::from_utf8_lossy(window);
    let head = if cut {
        &text[..floor_char_boundary(&text, max_bytes)]
    } else {
        &text[..]
    };
    let mut out = String::with_capacity(head.len() + 24);
    for c in head.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if cut {
        out.push(ELLIPSIS);
        out.push_str(&format!(" ({} bytes)", bytes.len()));
    }
    out
}

/// `text` as one cell of a GitHub-flavoured Markdown table, the one
/// escaper of every Markdown the runner writes: no line break (it would
/// end the row), no unescaped `|` (it would start a column), and no HTML
/// (a server's reply or a path with `<details>` must not open an element;
/// `&`, `<` and `>` render as themselves). By hand: pulldown-cmark and
/// comrak parse Markdown, and no maintained crate escapes a table cell.
pub fn markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The largest char boundary of `text` at or below `i` (`str::
/// floor_char_boundary` is newer than our minimum Rust). A UTF-8 character
/// is at most 4 bytes, so this looks at most 3 bytes back.
fn floor_char_boundary(text: &str, i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    (i.saturating_sub(3)..=i)
        .rev()
        .find(|&b| text.is_char_boundary(b))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_as_is() {
        assert_eq!(
            clip("injected fault: http-500", 200),
            "injected fault: http-500"
        );
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("abc", 3), "abc");
    }

    #[test]
    fn a_cut_inside_a_character_backs_off_to_its_start() {
        // 300 "€" is 900 bytes; 200 and 80 both fall inside a character
        // (3 bytes each), which is where `String::truncate` panicked.
        let euros = "€".repeat(300);
        assert!(!euros.is_char_boundary(200) && !euros.is_char_boundary(80));
        assert_eq!(
            clip(&euros, 200),
            format!("{}… (900 bytes)", "€".repeat(66))
        );
        assert_eq!(clip(&euros, 80), format!("{}… (900 bytes)", "€".repeat(26)));
        // Every cut point, every width of character.
        for text in [
            "€".repeat(40),
            "é".repeat(40),
            "😀".repeat(40),
            "a€é😀".repeat(10),
        ] {
            for max in 0..=text.len() + 1 {
                let out = clip(&text, max);
                let head = out.split(ELLIPSIS).next().unwrap();
                assert!(head.len() <= max, "{max}: {out}");
                assert!(text.starts_with(head), "{max}: {out}");
                assert!(
                    max.saturating_sub(3) <= head.len(),
                    "{max}: cut too much: {out}"
                );
            }
        }
    }

    #[test]
    fn a_clipped_text_says_how_long_it_was() {
        let long = "x".repeat(5000);
        let out = clip(&long, 80);
        assert_eq!(out, format!("{}… (5000 bytes)", "x".repeat(80)));
    }

    #[test]
    fn a_markdown_cell_stays_one_cell_of_text() {
        assert_eq!(
            markdown_cell("a|b\n<i>x</i> & y\r\nz"),
            "a\\|b &lt;i&gt;x&lt;/i&gt; &amp; y  z"
        );
        // The twin: plain text is left as it is.
        assert_eq!(markdown_cell("pass 1.04x/2.01x"), "pass 1.04x/2.01x");
    }

    #[test]
    fn control_characters_are_escaped_onto_one_line() {
        assert_eq!(clip("a\nb\r\u{1b}[2J", 100), "a\\nb\\r\\u{1b}[2J");
        // The escape does not count toward the cut: the cut is of the input.
        assert_eq!(clip("\n\n\n\n", 2), "\\n\\n… (4 bytes)");
    }

    #[test]
    fn invalid_bytes_read_as_replacement_characters() {
        // U+FFFD is 3 bytes: 10 bytes of text hold 3 of them; the length
        // given is the body's.
        let out = clip_bytes(&[0xff; 100], 10);
        assert_eq!(out, format!("{}… (100 bytes)", "\u{fffd}".repeat(3)));
        assert_eq!(clip_bytes(b"ok\xff", 10), "ok\u{fffd}");
        // A character the server cut in half, at the very end.
        let mut cut = "€".repeat(300).into_bytes();
        cut.pop();
        assert_eq!(
            clip_bytes(&cut, 200),
            format!("{}… (899 bytes)", "€".repeat(66))
        );
        assert_eq!(
            clip_bytes(&cut, 2000),
            format!("{}\u{fffd}", "€".repeat(299))
        );
    }

    #[test]
    fn the_head_is_the_longest_whole_character_prefix() {
        // A reference by counting characters, against the byte arithmetic.
        for text in ["", "ok", "a€é😀", &"€".repeat(300), &"x😀".repeat(99)] {
            for max in 0..=text.len() + 5 {
                let head: String = text
                    .char_indices()
                    .take_while(|(i, c)| i + c.len_utf8() <= max)
                    .map(|(_, c)| c)
                    .collect();
                let want = if head.len() == text.len() {
                    head
                } else {
                    format!("{head}… ({} bytes)", text.len())
                };
                assert_eq!(clip_bytes(text.as_bytes(), max), want, "max {max}");
            }
        }
    }
}
