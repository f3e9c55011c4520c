//! Times: `$timestamp` and REST Client's offsets (`-1 d`), `$datetime` and
//! `$localDatetime` with `iso8601`, `rfc1123` and Day.js format patterns.

use time::{Date, Duration, Month, OffsetDateTime, UtcOffset};

/// The units of an offset, as REST Client (Day.js) names them.
pub(crate) const OFFSET_UNITS: &str = "y, Q, M, w, d, h, m, s or ms";

/// REST Client's `{{$timestamp [offset unit]}}` (JetBrains' takes no arguments): Unix
/// time in seconds, shifted by the offset.
pub(crate) fn timestamp(arguments: &[String], now: OffsetDateTime) -> Result<String, String> {
    let moment = match arguments {
        [] => now,
        [amount, unit] => shift(now, amount, unit)?,
        _ => return Err("takes no arguments or an offset: `$timestamp`, `$timestamp -1 d`".to_owned()),
    };
    Ok(moment.unix_timestamp().to_string())
}

/// REST Client's `{{$datetime format [offset unit]}}` (UTC) and `{{$localDatetime …}}`
/// (`moment` already in the local offset): `iso8601`, `rfc1123` or a Day.js pattern.
pub(crate) fn datetime(arguments: &[String], moment: OffsetDateTime, local: bool) -> Result<String, String> {
    let (format, moment) = match arguments {
        [format] => (format, moment),
        [format, amount, unit] => (format, shift(moment, amount, unit)?),
        _ => {
            return Err("takes a format and an optional offset: `iso8601`, `rfc1123` or a quoted pattern like \
                 \"YYYY-MM-DD\", then e.g. `-1 d`"
                .to_owned());
        }
    };
    let format = unquote(format);
    if format.is_empty() {
        return Err("the format is empty (use `iso8601`, `rfc1123` or a pattern like \"YYYY-MM-DD\")".to_owned());
    }
    Ok(match (format, local) {
        // `Date.toISOString()`: UTC, always with milliseconds.
        ("iso8601", false) => iso_timestamp(moment),
        // Day.js `format()`: the local offset, no fraction.
        ("iso8601", true) => format_pattern("YYYY-MM-DDTHH:mm:ssZ", moment),
        // `Date.toUTCString()`.
        ("rfc1123", false) => format_pattern("ddd, DD MMM YYYY HH:mm:ss [GMT]", moment),
        ("rfc1123", true) => format_pattern("ddd, DD MMM YYYY HH:mm:ss ZZ", moment),
        (pattern, _) => format_pattern(pattern, moment),
    })
}

/// The local offset at `now`; UTC when the system cannot tell.
pub(crate) fn local_offset(now: OffsetDateTime) -> UtcOffset {
    UtcOffset::local_offset_at(now).unwrap_or(UtcOffset::UTC)
}

/// ISO 8601 in UTC with milliseconds, as JavaScript's `toISOString()` writes it:
/// `2026-11-22T10:20:30.123Z`.
pub(crate) fn iso_timestamp(now: OffsetDateTime) -> String {
    format_pattern("YYYY-MM-DDTHH:mm:ss.SSS[Z]", now.to_offset(UtcOffset::UTC))
}

/// A format written in single quotes (REST Client's `'YYYY-MM-DD'`) without them; double
/// quotes are already gone when the arguments arrive.
fn unquote(format: &str) -> &str {
    format.strip_prefix('\'').and_then(|rest| rest.strip_suffix('\'')).unwrap_or(format)
}

/// `moment` shifted by `amount` `unit`s. Years, quarters and months move the calendar and
/// keep the day of the month when it exists, else the month's last day (Day.js's
/// `add`): January 31 plus one month is the end of February.
fn shift(moment: OffsetDateTime, amount: &str, unit: &str) -> Result<OffsetDateTime, String> {
    let amount: i64 = amount.trim().parse().map_err(|_| format!("the offset `{amount}` is not an integer"))?;
    let out_of_range = || format!("the offset {amount} {unit} is out of range");
    let seconds =
        |amount: i64, per: i64| amount.checked_mul(per).and_then(|total| moment.checked_add(Duration::seconds(total)));
    let shifted = match unit {
        "y" => add_months(moment, amount.checked_mul(12).ok_or_else(out_of_range)?),
        "Q" => add_months(moment, amount.checked_mul(3).ok_or_else(out_of_range)?),
        "M" => add_months(moment, amount),
        "w" => seconds(amount, 7 * 86_400),
        "d" => seconds(amount, 86_400),
        "h" => seconds(amount, 3_600),
        "m" => seconds(amount, 60),
        "s" => seconds(amount, 1),
        "ms" => moment.checked_add(Duration::milliseconds(amount)),
        other => return Err(format!("unknown offset unit `{other}` (use {OFFSET_UNITS})")),
    };
    shifted.ok_or_else(out_of_range)
}

fn add_months(moment: OffsetDateTime, months: i64) -> Option<OffsetDateTime> {
    let index = i64::from(moment.year()).checked_mul(12)?.checked_add(i64::from(u8::from(moment.month())) - 1)?;
    let index = index.checked_add(months)?;
    let year = i32::try_from(index.div_euclid(12)).ok()?;
    let month = Month::try_from(u8::try_from(index.rem_euclid(12) + 1).ok()?).ok()?;
    let day = moment.day().min(month.length(year));
    let date = Date::from_calendar_date(year, month, day).ok()?;
    Some(moment.replace_date(date))
}

const WEEKDAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Formats `moment` with a Day.js pattern: `YYYY YY M MM MMM MMMM D DD d dd ddd dddd H HH
/// h hh m mm s ss SSS A a Z ZZ`, `[text]` written as it is; any other character stays as
/// written. A run of one letter is read as the longest token it starts with (`MMMMM` is
/// `MMMM` then `M`), as Day.js does.
pub(crate) fn format_pattern(pattern: &str, moment: OffsetDateTime) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut rest = pattern;
    while let Some(first) = rest.chars().next() {
        if first == '['
            && let Some(end) = rest[1..].find(']').filter(|&end| end > 0)
        {
            out.push_str(&rest[1..=end]);
            rest = &rest[end + 2..];
            continue;
        }
        let longest = match first {
            'Y' | 'M' | 'd' => 4,
            'D' | 'H' | 'h' | 'm' | 's' | 'Z' => 2,
            'A' | 'a' => 1,
            'S' if rest.starts_with("SSS") => 3,
            _ => 0,
        };
        let run = rest.chars().take_while(|&character| character == first).count().min(longest);
        if let Some(text) = token(first, run, moment) {
            out.push_str(&text);
            rest = &rest[run..];
        } else {
            // Not a token (`Y`, `YYY`, a letter Day.js does not know): as written.
            let length = if run == 0 { first.len_utf8() } else { run };
            out.push_str(&rest[..length]);
            rest = &rest[length..];
        }
    }
    out
}

fn token(letter: char, count: usize, moment: OffsetDateTime) -> Option<String> {
    let hour12 = match moment.hour() % 12 {
        0 => 12,
        hour => hour,
    };
    let weekday = usize::from(moment.weekday().number_days_from_sunday());
    let month = usize::from(u8::from(moment.month())) - 1;
    Some(match (letter, count) {
        ('Y', 4) => format!("{:04}", moment.year()),
        ('Y', 2) => format!("{:02}", moment.year().rem_euclid(100)),
        ('M', 1) => (month + 1).to_string(),
        ('M', 2) => format!("{:02}", month + 1),
        ('M', 3) => MONTHS[month][..3].to_owned(),
        ('M', 4) => MONTHS[month].to_owned(),
        ('D', 1) => moment.day().to_string(),
        ('D', 2) => format!("{:02}", moment.day()),
        ('d', 1) => weekday.to_string(),
        ('d', 2) => WEEKDAYS[weekday][..2].to_owned(),
        ('d', 3) => WEEKDAYS[weekday][..3].to_owned(),
        ('d', 4) => WEEKDAYS[weekday].to_owned(),
        ('H', 1) => moment.hour().to_string(),
        ('H', 2) => format!("{:02}", moment.hour()),
        ('h', 1) => hour12.to_string(),
        ('h', 2) => format!("{hour12:02}"),
        ('m', 1) => moment.minute().to_string(),
        ('m', 2) => format!("{:02}", moment.minute()),
        ('s', 1) => moment.second().to_string(),
        ('s', 2) => format!("{:02}", moment.second()),
        ('S', 3) => format!("{:03}", moment.millisecond()),
        ('A', 1) => (if moment.hour() < 12 { "AM" } else { "PM" }).to_owned(),
        ('a', 1) => (if moment.hour() < 12 { "am" } else { "pm" }).to_owned(),
        ('Z', 1) => offset(moment.offset(), ":"),
        ('Z', 2) => offset(moment.offset(), ""),
        _ => return None,
    })
}

/// `+05:30` (`separator` `:`) or `+0530`.
fn offset(offset: UtcOffset, separator: &str) -> String {
    let sign = if offset.is_negative() { '-' } else { '+' };
    let (hours, minutes, _) = offset.as_hms();
    format!("{sign}{:02}{separator}{:02}", hours.unsigned_abs(), minutes.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-11-14T22:13:20.045Z, a Tuesday.
    fn moment() -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_045_000_000).unwrap()
    }

    fn arguments(words: &[&str]) -> Vec<String> {
        words.iter().map(|&word| word.to_owned()).collect()
    }

    fn utc(words: &[&str]) -> Result<String, String> {
        datetime(&arguments(words), moment(), false)
    }

    #[test]
    fn timestamps_in_seconds_with_offsets() {
        assert_eq!(timestamp(&[], moment()).unwrap(), "1700000000");
        assert_eq!(timestamp(&arguments(&["-1", "d"]), moment()).unwrap(), "1699913600");
        assert_eq!(timestamp(&arguments(&["3", "h"]), moment()).unwrap(), "1700010800");
        assert_eq!(timestamp(&arguments(&["+2", "m"]), moment()).unwrap(), "1700000120");
        assert_eq!(timestamp(&arguments(&["1500", "ms"]), moment()).unwrap(), "1700000001");
        assert!(timestamp(&arguments(&["1"]), moment()).unwrap_err().contains("an offset"));
        assert!(timestamp(&arguments(&["x", "d"]), moment()).unwrap_err().contains("not an integer"));
        assert!(timestamp(&arguments(&["1", "q"]), moment()).unwrap_err().contains("unknown offset unit `q`"));
    }

    #[test]
    fn iso8601_and_rfc1123_as_javascript_writes_them() {
        assert_eq!(utc(&["iso8601"]).unwrap(), "2023-11-14T22:13:20.045Z");
        assert_eq!(utc(&["rfc1123"]).unwrap(), "Tue, 14 Nov 2023 22:13:20 GMT");
        assert_eq!(utc(&["iso8601", "1", "y"]).unwrap(), "2024-11-14T22:13:20.045Z");
        let whole = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        assert_eq!(iso_timestamp(whole), "2023-11-14T22:13:20.000Z", "milliseconds even when zero");
    }

    #[test]
    fn local_times_carry_their_offset() {
        let local = moment().to_offset(UtcOffset::from_hms(5, 30, 0).unwrap());
        let call = |words: &[&str]| datetime(&arguments(words), local, true).unwrap();
        assert_eq!(call(&["iso8601"]), "2023-11-15T03:43:20+05:30");
        assert_eq!(call(&["rfc1123"]), "Wed, 15 Nov 2023 03:43:20 +0530");
        assert_eq!(call(&["'YYYY-MM-DD HH:mm Z'", "-1", "d"]), "2023-11-14 03:43 +05:30");
        let west = moment().to_offset(UtcOffset::from_hms(-3, 0, 0).unwrap());
        assert_eq!(datetime(&arguments(&["iso8601"]), west, true).unwrap(), "2023-11-14T19:13:20-03:00");
        assert_eq!(datetime(&arguments(&["iso8601"]), moment(), true).unwrap(), "2023-11-14T22:13:20+00:00");
    }

    #[test]
    fn dayjs_tokens_escapes_and_plain_text() {
        assert_eq!(utc(&["DD-MM-YYYY"]).unwrap(), "14-11-2023");
        assert_eq!(utc(&["'YYYY-MM-DD'"]).unwrap(), "2023-11-14", "single quotes are not part of the format");
        assert_eq!(utc(&["YY M D H m s SSS"]).unwrap(), "23 11 14 22 13 20 045");
        assert_eq!(utc(&["MMM MMMM d dd ddd dddd"]).unwrap(), "Nov November 2 Tu Tue Tuesday");
        assert_eq!(utc(&["h hh A a"]).unwrap(), "10 10 PM pm");
        assert_eq!(utc(&["Z ZZ"]).unwrap(), "+00:00 +0000");
        assert_eq!(utc(&["[Today is] dddd [at] HH[h]"]).unwrap(), "Today is Tuesday at 22h");
        assert_eq!(utc(&["Y YYY MMMMM x [] é"]).unwrap(), "Y YYY November11 x [] é");
        let morning = OffsetDateTime::from_unix_timestamp(1_699_920_000).unwrap(); // 00:00
        assert_eq!(datetime(&arguments(&["h A"]), morning, false).unwrap(), "12 AM");
        assert!(utc(&["''"]).unwrap_err().contains("empty"));
        assert!(utc(&["iso8601", "1"]).unwrap_err().contains("optional offset"));
    }

    #[test]
    fn months_and_years_move_the_calendar() {
        let end_of_january = OffsetDateTime::from_unix_timestamp(1_706_700_000).unwrap(); // 2024-01-31
        let call = |amount: &str, unit: &str| {
            datetime(&arguments(&["YYYY-MM-DD", amount, unit]), end_of_january, false).unwrap()
        };
        assert_eq!(call("1", "M"), "2024-02-29", "the end of a shorter month");
        assert_eq!(call("-2", "M"), "2023-11-30");
        assert_eq!(call("1", "Q"), "2024-04-30");
        assert_eq!(call("13", "M"), "2025-02-28");
        assert_eq!(call("-1", "y"), "2023-01-31");
        assert_eq!(call("2", "w"), "2024-02-14");
        let leap_day = OffsetDateTime::from_unix_timestamp(1_709_200_000).unwrap(); // 2024-02-29
        assert_eq!(datetime(&arguments(&["YYYY-MM-DD", "1", "y"]), leap_day, false).unwrap(), "2025-02-28");
        assert!(utc(&["iso8601", "9999999999", "y"]).unwrap_err().contains("out of range"));
    }
}
