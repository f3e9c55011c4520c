//! `--report junit=PATH` and `--report json=PATH`.

use std::fmt::Write as _;
use std::time::Duration;

use volley_engine::assert::Outcome as Check;

use super::outcome::{Outcome, RequestResult};
use super::record::{self, error_record};
use super::select::File;

/// A JUnit XML report: one `<testsuite>` per file, one `<testcase>` per request, a
/// `<failure>` per failed or invalid assertion, an `<error>` for a request without a
/// response (a request not sent or an exchange that failed), `<skipped/>` for the
/// requests skipped (`# @disabled`, a declined `# @note`, `--fail-fast`, `--strict`).
pub(crate) fn junit(results: &[RequestResult], files: &[File], elapsed: Duration) -> anyhow::Result<String> {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let failures = results.iter().filter(|result| record::outcome_name(result) == "failed").count();
    let errors = results.iter().filter(|result| record::outcome_name(result) == "error").count();
    let skipped = results.iter().filter(|result| record::outcome_name(result) == "skipped").count();
    writeln!(
        xml,
        "<testsuites name=\"volley\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\">",
        results.len(),
        seconds(elapsed)
    )?;
    for file in files {
        let cases: Vec<&RequestResult> = results.iter().filter(|result| result.file == file.shown).collect();
        if cases.is_empty() {
            continue;
        }
        let count = |name: &str| cases.iter().filter(|result| record::outcome_name(result) == name).count();
        let time: Duration = cases.iter().map(|result| case_time(result)).sum();
        writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
            escape(&file.shown),
            cases.len(),
            count("failed"),
            count("error"),
            count("skipped"),
            seconds(time)
        )?;
        for result in cases {
            testcase(&mut xml, result, file)?;
        }
        writeln!(xml, "  </testsuite>")?;
    }
    writeln!(xml, "</testsuites>")?;
    Ok(xml)
}

fn testcase(xml: &mut String, result: &RequestResult, file: &File) -> anyhow::Result<()> {
    let line = result.line_span.start_position.line + 1;
    let title = match result.repetition {
        Some(run) => format!("{} (run {run})", result.title),
        None => result.title.clone(),
    };
    let open = format!(
        "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{line}\" time=\"{}\"",
        escape(&title),
        escape(&file.shown),
        escape(&file.shown),
        seconds(case_time(result))
    );
    match &result.outcome {
        Outcome::Skipped(why) => {
            let why = escape(why.describe());
            writeln!(xml, "{open}>\n      <skipped message=\"{why}\"/>\n    </testcase>")?;
        }
        Outcome::Error(_) | Outcome::Refused(_) | Outcome::Response { .. }
            if result.stream_failed() || !matches!(result.outcome, Outcome::Response { .. }) =>
        {
            let error = error_record(result, file).ok_or_else(|| anyhow::anyhow!("an error without a record"))?;
            writeln!(
                xml,
                "{open}>\n      <error message=\"{}\" type=\"{}\">{}:{}:{}: {}</error>\n    </testcase>",
                escape(&error.message),
                escape(&error.code),
                escape(&file.shown),
                error.line,
                error.column,
                escape(&error.message)
            )?;
        }
        Outcome::Error(_) | Outcome::Refused(_) => {}
        Outcome::Response { response, .. } => {
            let problems: Vec<_> = response
                .assertions()
                .iter()
                .zip(record::assertions(response, file))
                .filter(|(assertion, _)| !assertion.passed())
                .collect();
            if problems.is_empty() && result.attempts == 1 {
                writeln!(xml, "{open}/>")?;
                return Ok(());
            }
            writeln!(xml, "{open}>")?;
            if result.attempts > 1 {
                // Not part of JUnit's schema everywhere, but read by the CI servers that
                // show testcase properties (Jenkins, GitLab); others ignore it.
                writeln!(
                    xml,
                    "      <properties><property name=\"attempts\" value=\"{}\"/></properties>",
                    result.attempts
                )?;
            }
            for (assertion, shown) in problems {
                let (kind, detail) = match &assertion.outcome {
                    Check::Failed { .. } => (
                        "assertion",
                        format!(
                            "expected: {}\nactual: {}",
                            shown.expected.as_deref().unwrap_or_default(),
                            shown.actual.as_deref().unwrap_or_default()
                        ),
                    ),
                    Check::ScriptFailed { .. } => ("test", shown.message.clone().unwrap_or_default()),
                    Check::HandlerFailed { .. } => ("handler", shown.message.clone().unwrap_or_default()),
                    _ => ("invalid-assertion", shown.message.clone().unwrap_or_default()),
                };
                writeln!(
                    xml,
                    "      <failure message=\"{}\" type=\"{kind}\">{}:{}:{}: {}\n{}</failure>",
                    escape(&shown.expression),
                    escape(&file.shown),
                    shown.line,
                    shown.column,
                    escape(&shown.expression),
                    escape(&detail).replace("&#10;", "\n")
                )?;
            }
            writeln!(xml, "    </testcase>")?;
        }
    }
    Ok(())
}

/// The JSON report: `{"version": 1, "summary": {…}, "requests": [records…]}`.
pub(crate) fn json(results: &[RequestResult], files: &[File], elapsed: Duration) -> anyhow::Result<String> {
    let records: Vec<_> = results
        .iter()
        .filter_map(|result| {
            files.iter().find(|file| file.shown == result.file).map(|file| record::record(result, file))
        })
        .collect();
    let report = JsonReport { version: 1, summary: record::summary(results, elapsed), requests: records };
    Ok(serde_json::to_string_pretty(&report)? + "\n")
}

#[derive(serde::Serialize)]
struct JsonReport {
    version: u32,
    summary: record::Summary,
    requests: Vec<record::Record>,
}

fn case_time(result: &RequestResult) -> Duration {
    match &result.outcome {
        Outcome::Response { response, .. } => response.timing().total,
        _ => Duration::ZERO,
    }
}

fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
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
