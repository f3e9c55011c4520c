//! The JUnit XML report: one `<testsuite>` per file, one `<testcase>` per request, a
//! `<failure>` per failed or invalid assertion, an `<error>` for a request without a
//! response (a request not sent or an exchange that failed), `<skipped/>` for the
//! requests skipped (`# @disabled`, a declined `# @note`, `--fail-fast`, `--strict`).

use std::fmt::Write as _;

use super::{Entry, Report, seconds};

pub(super) fn render(report: &Report) -> anyhow::Result<String> {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    writeln!(
        xml,
        "<testsuites name=\"volley\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
        report.requests.len(),
        report.count("failed"),
        report.count("error"),
        report.count("skipped"),
        seconds(report.duration_ms)
    )?;
    for file in report.files() {
        let cases: Vec<&Entry> = report.entries().filter(|entry| entry.file == file).collect();
        let count = |outcome: &str| cases.iter().filter(|entry| entry.outcome == outcome).count();
        let time: f64 = cases.iter().map(|entry| entry.millis()).sum();
        writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
            escape(file),
            cases.len(),
            count("failed"),
            count("error"),
            count("skipped"),
            seconds(time)
        )?;
        for entry in cases {
            testcase(&mut xml, entry)?;
        }
        writeln!(xml, "  </testsuite>")?;
    }
    writeln!(xml, "</testsuites>")?;
    Ok(xml)
}

fn testcase(xml: &mut String, entry: &Entry) -> anyhow::Result<()> {
    let file = escape(&entry.file);
    let open = format!(
        "    <testcase name=\"{}\" classname=\"{file}\" file=\"{file}\" line=\"{}\" time=\"{}\"",
        escape(&entry.title()),
        entry.line,
        seconds(entry.millis())
    );
    match entry.outcome.as_str() {
        "skipped" => {
            let why = escape(entry.skip_reason());
            writeln!(xml, "{open}>\n      <skipped message=\"{why}\"/>\n    </testcase>")?;
        }
        "error" => {
            let error = entry.error.as_ref().ok_or_else(|| anyhow::anyhow!("an error without a record"))?;
            writeln!(
                xml,
                "{open}>\n      <error message=\"{}\" type=\"{}\">{file}:{}:{}: {}</error>\n    </testcase>",
                escape(&error.message),
                escape(&error.code),
                error.line,
                error.column,
                escape(&error.message)
            )?;
        }
        _ => {
            let problems: Vec<_> = entry.assertions.iter().filter(|assertion| !assertion.passed()).collect();
            if problems.is_empty() && entry.attempts == 1 {
                writeln!(xml, "{open}/>")?;
                return Ok(());
            }
            writeln!(xml, "{open}>")?;
            if entry.attempts > 1 {
                // Not part of JUnit's schema everywhere, but read by the CI servers that
                // show testcase properties (Jenkins, GitLab); others ignore it.
                writeln!(
                    xml,
                    "      <properties><property name=\"attempts\" value=\"{}\"/></properties>",
                    entry.attempts
                )?;
            }
            for assertion in problems {
                writeln!(
                    xml,
                    "      <failure message=\"{}\" type=\"{}\">{file}:{}:{}: {}\n{}</failure>",
                    escape(&assertion.expression),
                    assertion.failure_kind(),
                    assertion.line,
                    assertion.column,
                    escape(&assertion.expression),
                    escape(&assertion.detail()).replace("&#10;", "\n")
                )?;
            }
            writeln!(xml, "    </testcase>")?;
        }
    }
    Ok(())
}

/// Text for XML attributes and content; characters XML 1.0 does not allow are dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push(character),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_for_xml() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
    }
}
