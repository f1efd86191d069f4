//! nginx configuration syntax: tokens, directives, blocks and `include`,
//! as nginx's own parser (ngx_conf_file.c) reads them.
//!
//! A directive is words ending with `;` or followed by a `{ ... }` block.
//! Words are separated by white space; `#` starts a comment where a word
//! could start; `"..."` and `'...'` quote (with `\` escapes); `{`, `}` and
//! `;` end a word. `include` is expanded where it stands, in whatever block
//! it is in; a relative path (and a glob) is taken from the directory of the
//! main configuration file, nginx's "conf prefix".

use std::path::{Path, PathBuf};

/// One directive, with the file and line it was written on.
#[derive(Debug, Clone, PartialEq)]
pub struct Directive {
    pub name: String,
    pub args: Vec<String>,
    /// Index into [`Config::files`].
    pub file: usize,
    pub line: u32,
    /// The block's directives, for block directives (`http`, `server`, ...).
    pub block: Option<Vec<Directive>>,
}

impl Directive {
    pub fn arg(&self, i: usize) -> Option<&str> {
        self.args.get(i).map(String::as_str)
    }
    pub fn children(&self) -> &[Directive] {
        self.block.as_deref().unwrap_or(&[])
    }
    /// The directive as it would be written (without its block).
    pub fn text(&self) -> String {
        let mut s = self.name.clone();
        for a in &self.args {
            s.push(' ');
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == ';' || c == '{') {
                s.push('"');
                s.push_str(a);
                s.push('"');
            } else {
                s.push_str(a);
            }
        }
        if self.block.is_none() {
            s.push(';');
        }
        s
    }
}

/// A whole configuration: the main file and everything it includes.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Files read, the main one first (as given, or joined to the conf prefix).
    pub files: Vec<PathBuf>,
    pub root: Vec<Directive>,
}

impl Config {
    /// The directory relative paths are taken from (nginx's conf prefix).
    pub fn prefix(&self) -> PathBuf {
        self.files
            .first()
            .and_then(|f| f.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }
    /// `file:line` of a directive.
    pub fn at(&self, d: &Directive) -> String {
        format!("{}:{}", self.files[d.file].display(), d.line)
    }
    /// A path as nginx resolves it against the conf prefix.
    pub fn resolve(&self, p: &str) -> PathBuf {
        let path = Path::new(p);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.prefix().join(path)
        }
    }
}

/// An error with the file and line it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub file: PathBuf,
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// Deeper includes than this are a loop (nginx itself would recurse until
/// it runs out of descriptors).
const MAX_INCLUDE_DEPTH: usize = 32;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Semicolon,
    Open,
    Close,
}

fn tokenize(text: &str, file: &Path) -> Result<Vec<(Token, u32)>, ParseError> {
    let err = |line: u32, message: String| ParseError {
        file: file.to_path_buf(),
        line,
        message,
    };
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1u32;
    let mut word = String::new();
    let mut word_line = 1u32;
    let mut in_word = false;
    let flush = |out: &mut Vec<(Token, u32)>, word: &mut String, in_word: &mut bool, l: u32| {
        if *in_word {
            out.push((Token::Word(std::mem::take(word)), l));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                flush(&mut out, &mut word, &mut in_word, word_line);
                line += 1;
            }
            c if c.is_whitespace() => flush(&mut out, &mut word, &mut in_word, word_line),
            ';' | '{' | '}' => {
                flush(&mut out, &mut word, &mut in_word, word_line);
                out.push((
                    match c {
                        ';' => Token::Semicolon,
                        '{' => Token::Open,
                        _ => Token::Close,
                    },
                    line,
                ));
            }
            '#' if !in_word => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '"' | '\'' if !in_word => {
                let quote = c;
                let start = line;
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None => return Err(err(start, format!("unterminated {quote} quote"))),
                        Some('\\') => match chars.next() {
                            Some(n) if n == quote || n == '\\' => s.push(n),
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some('r') => s.push('\r'),
                            Some(n) => {
                                if n == '\n' {
                                    line += 1;
                                }
                                s.push('\\');
                                s.push(n);
                            }
                            None => return Err(err(start, format!("unterminated {quote} quote"))),
                        },
                        Some(q) if q == quote => break,
                        Some(n) => {
                            if n == '\n' {
                                line += 1;
                            }
                            s.push(n);
                        }
                    }
                }
                // nginx wants a separator after a quoted word.
                match chars.peek() {
                    Some(n) if n.is_whitespace() || matches!(n, ';' | '{' | '}') => {}
                    None => {}
                    Some(n) => {
                        return Err(err(line, format!("unexpected \"{n}\" after a quoted word")))
                    }
                }
                out.push((Token::Word(s), start));
            }
            '\\' => {
                if !in_word {
                    word_line = line;
                    in_word = true;
                }
                if let Some(n) = chars.next() {
                    if n == '\n' {
                        line += 1;
                    }
                    word.push('\\');
                    word.push(n);
                }
            }
            c => {
                if !in_word {
                    word_line = line;
                    in_word = true;
                }
                word.push(c);
            }
        }
    }
    flush(&mut out, &mut word, &mut in_word, word_line);
    Ok(out)
}

struct Parser<'a> {
    config: &'a mut Config,
    depth: usize,
}

impl Parser<'_> {
    fn file(&mut self, path: &Path) -> Result<Vec<Directive>, ParseError> {
        let bytes = std::fs::read(path).map_err(|e| ParseError {
            file: path.to_path_buf(),
            line: 0,
            message: format!("cannot read: {e}"),
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let tokens = tokenize(&text, path)?;
        let index = self.config.files.len();
        self.config.files.push(path.to_path_buf());
        let mut pos = 0;
        let out = self.block(&tokens, &mut pos, index, false)?;
        Ok(out)
    }

    fn block(
        &mut self,
        tokens: &[(Token, u32)],
        pos: &mut usize,
        file: usize,
        nested: bool,
    ) -> Result<Vec<Directive>, ParseError> {
        let path = self.config.files[file].clone();
        let err = |line: u32, message: String| ParseError {
            file: path.clone(),
            line,
            message,
        };
        let mut out = Vec::new();
        loop {
            let Some((tok, line)) = tokens.get(*pos) else {
                if nested {
                    let line = tokens.last().map(|t| t.1).unwrap_or(0);
                    return Err(err(line, "unexpected end of file, expecting \"}\"".into()));
                }
                return Ok(out);
            };
            *pos += 1;
            let (name, line) = match tok {
                Token::Word(w) => (w.clone(), *line),
                Token::Close if nested => return Ok(out),
                Token::Close => return Err(err(*line, "unexpected \"}\"".into())),
                Token::Semicolon => return Err(err(*line, "unexpected \";\"".into())),
                Token::Open => return Err(err(*line, "unexpected \"{\"".into())),
            };
            let mut args = Vec::new();
            loop {
                let Some((tok, l)) = tokens.get(*pos) else {
                    return Err(err(
                        line,
                        format!("directive \"{name}\" is not terminated by \";\""),
                    ));
                };
                *pos += 1;
                match tok {
                    Token::Word(w) => args.push(w.clone()),
                    Token::Semicolon => {
                        if name == "include" {
                            out.extend(self.include(&args, file, line)?);
                        } else {
                            out.push(Directive {
                                name,
                                args,
                                file,
                                line,
                                block: None,
                            });
                        }
                        break;
                    }
                    Token::Open => {
                        let children = self.block(tokens, pos, file, true)?;
                        out.push(Directive {
                            name,
                            args,
                            file,
                            line,
                            block: Some(children),
                        });
                        break;
                    }
                    Token::Close => {
                        return Err(err(*l, format!("unexpected \"}}\" in \"{name}\"")));
                    }
                }
            }
        }
    }

    fn include(
        &mut self,
        args: &[String],
        file: usize,
        line: u32,
    ) -> Result<Vec<Directive>, ParseError> {
        let here = self.config.files[file].clone();
        let err = |message: String| ParseError {
            file: here.clone(),
            line,
            message,
        };
        let [pattern] = args else {
            return Err(err("\"include\" takes one argument".into()));
        };
        if self.depth >= MAX_INCLUDE_DEPTH {
            return Err(err(format!(
                "includes nested deeper than {MAX_INCLUDE_DEPTH} (a loop?)"
            )));
        }
        let full = self.config.resolve(pattern);
        let files = if has_glob(pattern) {
            glob(&full)
        } else {
            vec![full]
        };
        let mut out = Vec::new();
        for f in files {
            self.depth += 1;
            let r = self.file(&f);
            self.depth -= 1;
            out.extend(r.map_err(|e| {
                if e.line == 0 {
                    err(format!("include {}: {}", f.display(), e.message))
                } else {
                    e
                }
            })?);
        }
        Ok(out)
    }
}

/// Reads a configuration file and everything it includes.
pub fn parse_file(path: &Path) -> Result<Config, ParseError> {
    let mut config = Config::default();
    let root = Parser {
        config: &mut config,
        depth: 0,
    }
    .file(path)?;
    config.root = root;
    Ok(config)
}

fn has_glob(p: &str) -> bool {
    p.contains(['*', '?', '['])
}

/// glob(3) for `*`, `?` and `[...]` in any path component; matches in
/// sorted order, as nginx's include gets them (no match is no file, not an
/// error, for a pattern).
pub fn glob(pattern: &Path) -> Vec<PathBuf> {
    let mut current = vec![PathBuf::new()];
    for comp in pattern.components() {
        let part = comp.as_os_str().to_string_lossy().to_string();
        let mut next = Vec::new();
        for base in &current {
            if has_glob(&part) {
                let dir = if base.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    base.clone()
                };
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .filter(|n| !n.starts_with('.') || part.starts_with('.'))
                    .filter(|n| wildcard(&part, n))
                    .collect();
                names.sort();
                next.extend(names.into_iter().map(|n| base.join(n)));
            } else {
                next.push(base.join(&part));
            }
        }
        current = next;
    }
    current.retain(|p| p.is_file());
    current
}

fn wildcard(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    fn go(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|i| go(&p[1..], &n[i..])),
            Some('?') => !n.is_empty() && go(&p[1..], &n[1..]),
            Some('[') => {
                let Some(end) = p.iter().position(|&c| c == ']') else {
                    return !n.is_empty() && n[0] == '[' && go(&p[1..], &n[1..]);
                };
                let Some(&c) = n.first() else { return false };
                let set = &p[1..end];
                let (negate, set) = match set.first() {
                    Some('!') | Some('^') => (true, &set[1..]),
                    _ => (false, set),
                };
                let mut hit = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == '-' {
                        hit |= set[i] <= c && c <= set[i + 2];
                        i += 3;
                    } else {
                        hit |= set[i] == c;
                        i += 1;
                    }
                }
                hit != negate && go(&p[end + 1..], &n[1..])
            }
            Some(&c) => n.first() == Some(&c) && go(&p[1..], &n[1..]),
        }
    }
    go(&p, &n)
}

/// Parses configuration text held in memory (tests; `include` resolves
/// against `dir`).
pub fn parse_str(text: &str, dir: &Path) -> Result<Config, ParseError> {
    let name = dir.join("nginx.conf");
    let tokens = tokenize(text, &name)?;
    let mut config = Config {
        files: vec![name],
        root: Vec::new(),
    };
    let mut parser = Parser {
        config: &mut config,
        depth: 0,
    };
    let mut pos = 0;
    let root = parser.block(&tokens, &mut pos, 0, false)?;
    config.root = root;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_comments_and_lines_are_read_as_nginx_reads_them() {
        let c = parse_str(
            "# comment\nhttp {\n  add_header X \"a;b {c}\";  # trailing\n  server { listen 443 ssl; }\n}\n",
            Path::new("/nonexistent"),
        )
        .unwrap();
        let http = &c.root[0];
        assert_eq!(http.name, "http");
        assert_eq!(http.line, 2);
        let add = &http.children()[0];
        assert_eq!(add.args, vec!["X", "a;b {c}"]);
        assert_eq!(add.line, 3);
        let server = &http.children()[1];
        assert_eq!(server.children()[0].args, vec!["443", "ssl"]);
        assert_eq!(server.children()[0].line, 4);
    }

    #[test]
    fn unbalanced_braces_and_missing_semicolons_are_errors_with_the_line() {
        let e = parse_str("http {\n server {\n", Path::new("/x")).unwrap_err();
        assert!(e.message.contains("unexpected end of file"), "{e}");
        let e = parse_str("http {\n tcp_nodelay off\n}\n", Path::new("/x")).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse_str("}\n", Path::new("/x")).unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse_str("a \"b\n", Path::new("/x")).unwrap_err();
        assert!(e.message.contains("unterminated"), "{e}");
    }

    #[test]
    fn wildcards_match_like_glob() {
        assert!(wildcard("*.conf", "a.conf"));
        assert!(!wildcard("*.conf", "a.conf.bak"));
        assert!(wildcard("site-?.conf", "site-1.conf"));
        assert!(wildcard("[ab]*", "b1"));
        assert!(!wildcard("[!ab]*", "b1"));
        assert!(wildcard("[0-9].conf", "7.conf"));
    }

    #[test]
    fn include_loops_stop_with_an_error_not_a_stack_overflow() {
        let dir = std::env::temp_dir().join(format!("rttdoc-audit-loop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("nginx.conf"), "include nginx.conf;\n").unwrap();
        let e = parse_file(&dir.join("nginx.conf")).unwrap_err();
        assert!(e.message.contains("nested deeper"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_or_fails_with_a_line_never_a_panic(text in "[a-z0-9 ;{}#\"'\\\n$*]{0,200}") {
            match parse_str(&text, Path::new("/nonexistent")) {
                Ok(c) => {
                    for d in &c.root {
                        proptest::prop_assert!(d.line >= 1);
                    }
                }
                Err(e) => proptest::prop_assert!(e.line as usize <= text.lines().count() + 1),
            }
        }
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "{",
            "}",
            ";",
            "\"",
            "'\\",
            "a b c",
            "a {{{ }}}",
            "\\",
            "#",
            "a\"b\";",
        ] {
            let _ = parse_str(text, Path::new("/x"));
        }
    }
}
