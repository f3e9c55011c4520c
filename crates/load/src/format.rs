//! How figures are written for people: latencies with a unit that fits, rates,
//! percentages, byte counts.

/// A latency given in microseconds: `850 µs`, `12.3 ms`, `1.25 s`.
#[must_use]
pub fn micros(micros: f64) -> String {
    if micros < 1_000.0 {
        format!("{micros:.0} µs")
    } else if micros < 1_000_000.0 {
        let millis = micros / 1_000.0;
        if millis < 10.0 { format!("{millis:.2} ms") } else { format!("{millis:.1} ms") }
    } else {
        format!("{:.2} s", micros / 1_000_000.0)
    }
}

/// A rate: `12,345.6`, `3.21`.
#[must_use]
pub fn rate(rate: f64) -> String {
    if rate >= 100.0 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // rounded, non-negative, small
        thousands(rate.round() as u64)
    } else {
        format!("{rate:.2}")
    }
}

/// A count with thousands separators: `1,234,567`.
#[must_use]
pub fn thousands(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A ratio (0–1) as a percentage: `0.05 %`, `12.5 %`.
#[must_use]
pub fn percent(ratio: f64) -> String {
    let percent = ratio * 100.0;
    if percent == 0.0 {
        "0 %".to_owned()
    } else if percent < 1.0 {
        format!("{percent:.3} %")
    } else {
        format!("{percent:.1} %")
    }
}

/// A byte count: `512 B`, `1.5 MB`.
#[must_use]
pub fn bytes(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // shown with three digits
    let value = bytes as f64;
    if bytes < 1_000 {
        format!("{bytes} B")
    } else if bytes < 1_000_000 {
        format!("{:.1} kB", value / 1e3)
    } else if bytes < 1_000_000_000 {
        format!("{:.1} MB", value / 1e6)
    } else {
        format!("{:.2} GB", value / 1e9)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn figures_read_well() {
        assert_eq!(super::micros(850.0), "850 µs");
        assert_eq!(super::micros(1_234.0), "1.23 ms");
        assert_eq!(super::micros(123_400.0), "123.4 ms");
        assert_eq!(super::micros(1_250_000.0), "1.25 s");
        assert_eq!(super::thousands(1_234_567), "1,234,567");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::rate(12_345.6), "12,346");
        assert_eq!(super::percent(0.0005), "0.050 %");
        assert_eq!(super::bytes(1_500_000), "1.5 MB");
    }
}
