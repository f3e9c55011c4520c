//! A command line split into words by the rules of the shell it was written for: POSIX
//! (the `shlex` crate), Windows `cmd` (as browsers' "Copy as cURL (cmd)" writes it) or
//! PowerShell (`curl.exe` with backtick continuations). No crate reads the last two, so
//! they are read here.

/// The shell a command was written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shell {
    Posix,
    Cmd,
    Powershell,
}

impl Shell {
    /// The shell `command` looks written for: `cmd` when a line ends with a `^`
    /// continuation or the command has `^"` escapes; PowerShell when a line ends with a
    /// backtick or the program is `curl.exe`; else POSIX.
    pub(super) fn guess(command: &str) -> Shell {
        let lines_end_with = |end: char| command.lines().any(|line| line.trim_end().ends_with(end));
        if lines_end_with('^') || command.contains("^\"") {
            Shell::Cmd
        } else if lines_end_with('`') || command.trim_start().starts_with("curl.exe") {
            Shell::Powershell
        } else {
            Shell::Posix
        }
    }
}

/// The words of `command`; `None` when a quote is not closed.
pub(super) fn split(command: &str, shell: Shell) -> Option<Vec<String>> {
    match shell {
        Shell::Posix => shlex::split(&command.replace("\\\r\n", " ").replace("\\\n", " ")),
        Shell::Cmd => split_windows_arguments(&unescape_cmd(command)),
        Shell::Powershell => split_powershell(command),
    }
}

/// What `cmd` passes to the program: `^` escapes the next character (and with a line
/// break continues the line), except inside `"…"` that `cmd` itself sees, where it is
/// kept. A `"` reached through `^"` is passed on but does not start such a region.
fn unescape_cmd(command: &str) -> String {
    let mut passed = String::with_capacity(command.len());
    let mut quoted = false;
    let mut characters = command.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '^' if !quoted => match characters.next() {
                Some('\r') if characters.peek() == Some(&'\n') => {
                    characters.next();
                }
                // A continued line: the break is not passed on.
                Some('\n') | None => {}
                Some(escaped) => passed.push(escaped),
            },
            '"' => {
                quoted = !quoted;
                passed.push('"');
            }
            _ => passed.push(character),
        }
    }
    passed
}

/// The arguments a Windows program (curl.exe, through the C runtime) reads from its
/// command line: whitespace separates them outside `"…"`; `2n` backslashes before a `"`
/// are `n` backslashes and the quote opens or closes, `2n+1` are `n` and a literal `"`;
/// `""` inside quotes is a literal `"`; other backslashes are literal.
fn split_windows_arguments(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let characters: Vec<char> = line.chars().collect();
    let mut at = 0;
    while at < characters.len() {
        let character = characters[at];
        match character {
            '\\' => {
                let start = at;
                while at < characters.len() && characters[at] == '\\' {
                    at += 1;
                }
                let count = at - start;
                if characters.get(at) == Some(&'"') {
                    word.extend(std::iter::repeat_n('\\', count / 2));
                    if count % 2 == 1 {
                        word.push('"');
                        at += 1;
                    }
                } else {
                    word.extend(std::iter::repeat_n('\\', count));
                }
                in_word = true;
                continue;
            }
            '"' if quoted && characters.get(at + 1) == Some(&'"') => {
                word.push('"');
                at += 1;
            }
            '"' => {
                quoted = !quoted;
                in_word = true;
            }
            ' ' | '\t' | '\r' | '\n' if !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            _ => {
                word.push(character);
                in_word = true;
            }
        }
        at += 1;
    }
    if quoted {
        return None;
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// PowerShell's words: `'…'` literal (`''` is a `'`), `"…"` with backtick escapes
/// (`` `n ``, `` `t ``, `` `r ``, `` `0 ``, any other character as itself) and `""`
/// for a `"`; outside quotes a backtick escapes the next character, and before a line
/// break continues the line. `$` is kept as written: variables are not expanded.
fn split_powershell(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut characters = command.chars().peekable();
    let escape = |escaped: char| match escaped {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        other => other,
    };
    while let Some(character) = characters.next() {
        match character {
            '`' => match characters.next() {
                Some('\r') if characters.peek() == Some(&'\n') => {
                    characters.next();
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                Some('\n') | None => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                Some(escaped) => {
                    word.push(escaped);
                    in_word = true;
                }
            },
            '\'' => {
                in_word = true;
                loop {
                    match characters.next()? {
                        '\'' if characters.peek() == Some(&'\'') => {
                            characters.next();
                            word.push('\'');
                        }
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match characters.next()? {
                        '`' => word.push(escape(characters.next()?)),
                        '"' if characters.peek() == Some(&'"') => {
                            characters.next();
                            word.push('"');
                        }
                        '"' => break,
                        other => word.push(other),
                    }
                }
            }
            ' ' | '\t' | '\r' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            _ => {
                word.push(character);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<String> {
        split(command, Shell::guess(command)).unwrap_or_else(|| panic!("{command}: unclosed quote"))
    }

    #[test]
    fn guesses_the_shell() {
        assert_eq!(Shell::guess("curl 'https://h/' \\\n -H 'a: b'"), Shell::Posix);
        assert_eq!(Shell::guess("curl ^\"https://h/^\" ^\n  -H ^\"a: b^\""), Shell::Cmd);
        assert_eq!(Shell::guess("curl.exe \"https://h/\" `\n  -H \"a: b\""), Shell::Powershell);
        assert_eq!(Shell::guess("curl.exe https://h/"), Shell::Powershell);
    }

    /// The form browsers copy for `cmd`: every special character after a `^`, quotes in
    /// values as `\^"`.
    #[test]
    fn reads_cmd_escapes_and_continuations() {
        let command = "curl ^\"https://h/a?b=1^&c=2^\" ^\r\n  -H ^\"content-type: application/json^\" ^\n  \
                       --data-raw ^\"^{^\\^\"name^\\^\":^\\^\"O'Hara 100^%^\\^\"^}^\" ^\n  --compressed";
        assert_eq!(
            words(command),
            [
                "curl",
                "https://h/a?b=1&c=2",
                "-H",
                "content-type: application/json",
                "--data-raw",
                "{\"name\":\"O'Hara 100%\"}",
                "--compressed"
            ]
        );
        assert_eq!(
            words("curl \"https://h/x y\" -d \"a\"\"b\" ^\n -u a\\b"),
            ["curl", "https://h/x y", "-d", "a\"b", "-u", "a\\b"]
        );
        assert_eq!(split("curl \"open", Shell::Cmd), None);
    }

    #[test]
    fn reads_powershell_quotes_and_backticks() {
        let command =
            "curl.exe -X POST \"https://h/`$x\" `\n  -H 'X-Quote: it''s' `\r\n  --data-raw \"{`\"a`\": 1}`n\"";
        assert_eq!(
            words(command),
            ["curl.exe", "-X", "POST", "https://h/$x", "-H", "X-Quote: it's", "--data-raw", "{\"a\": 1}\n"]
        );
        assert_eq!(words("curl.exe a`\"b \"c\"\"d\""), ["curl.exe", "a\"b", "c\"d"]);
        assert_eq!(split("curl.exe 'open", Shell::Powershell), None);
    }
}
