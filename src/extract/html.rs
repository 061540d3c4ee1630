//! HTML to plain text for e-mail bodies that have no text part: tags dropped, scripts and
//! styles skipped, block elements on their own lines, character references decoded.

/// Convert an HTML fragment or document to readable text.
pub fn to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    let mut skip_until: Option<&'static str> = None;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            if skip_until.is_none() {
                push_text(&mut out, rest);
            }
            break;
        };
        if skip_until.is_none() {
            push_text(&mut out, &rest[..lt]);
        }
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map(|i| &rest[i + 3..]).unwrap_or("");
            continue;
        }
        let Some(gt) = rest.find('>') else { break };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if let Some(end) = skip_until {
            if closing && name == end {
                skip_until = None;
            }
            continue;
        }
        // `<head/>` (XHTML) opens and closes at once: nothing to skip.
        let empty = tag.trim_end().ends_with('/');
        match name.as_str() {
            "script" if !closing && !empty => skip_until = Some("script"),
            "style" if !closing && !empty => skip_until = Some("style"),
            "head" if !closing && !empty => skip_until = Some("head"),
            "br" => out.push('\n'),
            "p" | "div" | "tr" | "li" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "table"
            | "ul" | "ol" | "blockquote" | "pre" | "hr" | "title" => {
                if !out.ends_with('\n') && !out.is_empty() {
                    out.push('\n');
                }
                if name == "li" && !closing {
                    out.push_str("• ");
                }
            }
            "td" | "th" if closing => out.push_str(" | "),
            _ => {}
        }
    }
    // Collapse runs of blank lines and trailing spaces.
    let mut clean = String::with_capacity(out.len());
    let mut blank = 0;
    for line in out.lines() {
        let l = line.trim_end().trim_end_matches(" |").trim_end();
        if l.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        clean.push_str(l.trim_start_matches(' '));
        clean.push('\n');
    }
    clean.trim().to_string() + "\n"
}

fn push_text(out: &mut String, raw: &str) {
    let decoded = decode_entities(raw);
    // Whitespace in HTML text collapses to single spaces.
    let mut last_space = out.ends_with([' ', '\n']);
    for c in decoded.chars() {
        if c.is_whitespace() && c != '\u{A0}' {
            if !last_space {
                out.push(' ');
                last_space = true;
            }
        } else {
            out.push(if c == '\u{A0}' { ' ' } else { c });
            last_space = false;
        }
    }
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest[1..]
            .find(|c: char| c == ';' || c.is_whitespace() || c == '&')
            .map(|j| j + 1);
        let (entity, after) = match end {
            Some(j) if rest.as_bytes().get(j) == Some(&b';') && j <= 12 => {
                (&rest[1..j], &rest[j + 1..])
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
                continue;
            }
        };
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some('\u{A0}'),
            "copy" => Some('©'),
            "reg" => Some('®'),
            "euro" => Some('€'),
            "mdash" => Some('—'),
            "ndash" => Some('–'),
            "hellip" => Some('…'),
            "laquo" => Some('«'),
            "raquo" => Some('»'),
            e if e.starts_with("#x") || e.starts_with("#X") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match ch {
            Some(c) => out.push(c),
            None => {
                out.push('&');
                out.push_str(entity);
                out.push(';');
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::to_text;

    #[test]
    fn html_becomes_text() {
        let h = "<html><head><title>x</title><style>p{}</style></head><body><p>Hello&nbsp;<b>world</b> &amp; all</p><script>evil()</script><ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr></table>caf&#233; &#x263A;</body></html>";
        assert_eq!(
            to_text(h),
            "Hello world & all\n• one\n• two\na | b\ncafé ☺\n"
        );
    }
}
