//! Parsers for the text forms Delta writes scalar values in: partition values
//! (protocol §7) and JSON stats (§8.1). Each returns `None` when the text is
//! not that form; callers decide whether that is an error (partition values)
//! or a missing statistic (stats).

use chrono::{Datelike, NaiveDate};

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;
/// `NaiveDate::num_days_from_ce()` of 1970-01-01.
const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// Decimal integer text (`-12`, `+7`), within `T`'s range.
pub(crate) fn parse_integer<T: TryFrom<i64>>(text: &str) -> Option<T> {
    text.parse::<i64>().ok().and_then(|v| T::try_from(v).ok())
}

/// Java `toString` forms (`1.5`, `1.0E10`, `NaN`, `Infinity`, `-Infinity`),
/// and JSON numbers. Rust's parser is exact (nearest value) for both widths.
pub(crate) fn parse_f64(text: &str) -> Option<f64> {
    if text.is_empty() {
        return None;
    }
    text.parse().ok()
}

/// See [`parse_f64`]; parsed straight to `f32` so the nearest `f32` is found
/// (never through `f64`, which could double-round).
pub(crate) fn parse_f32(text: &str) -> Option<f32> {
    if text.is_empty() {
        return None;
    }
    text.parse().ok()
}

/// `true` / `false` in any case.
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    if text.eq_ignore_ascii_case("true") {
        Some(true)
    } else if text.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// Decimal text (`-12.50`, `1.23E+5`, `0E-10`) as the unscaled `i128` of
/// `decimal(precision, scale)`, exactly, without floating point. `None` when
/// the text is malformed, has non-zero digits beyond `scale`, or does not fit
/// `precision`.
pub(crate) fn parse_decimal(text: &str, precision: u8, scale: u8) -> Option<i128> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((i, f)) => (i, f),
        None => (mantissa, ""),
    };
    if int_part.len() + frac_part.len() == 0
        || !int_part
            .bytes()
            .chain(frac_part.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let exponent: i64 = match exponent {
        Some("") => return None,
        // An absurd exponent on a non-zero mantissa can never fit; on zero it is 0.
        Some(e) => e.parse().unwrap_or(i64::MAX),
        None => 0,
    };
    // value = digits * 10^(exponent - frac_len); scaled = value * 10^scale.
    let digits = || int_part.bytes().chain(frac_part.bytes());
    let leading_zeros = digits().take_while(|b| *b == b'0').count();
    let significant = int_part.len() + frac_part.len() - leading_zeros;
    if significant == 0 {
        return Some(0);
    }
    let frac_len = i64::try_from(frac_part.len()).ok()?;
    let shift = exponent
        .checked_sub(frac_len)?
        .checked_add(i64::from(scale))?;
    // A negative shift drops that many trailing digits, which must be zeros.
    let kept = if shift < 0 {
        let drop = usize::try_from(shift.unsigned_abs()).ok()?;
        if drop >= significant {
            // Every significant digit lies below the scale: not representable.
            return None;
        }
        if digits()
            .skip(leading_zeros + significant - drop)
            .any(|b| b != b'0')
        {
            return None;
        }
        significant - drop
    } else {
        significant
    };
    let shift = u32::try_from(shift.max(0)).ok()?;
    if kept + shift as usize > usize::from(precision) {
        return None;
    }
    let mut value: i128 = 0;
    for b in digits().skip(leading_zeros).take(kept) {
        value = value * 10 + i128::from(b - b'0');
    }
    value = value.checked_mul(10i128.checked_pow(shift)?)?;
    Some(if negative { -value } else { value })
}

/// `YYYY-MM-DD` (years of four or more digits, optional sign) as days since
/// 1970-01-01.
pub(crate) fn parse_date(text: &str) -> Option<i32> {
    let (days, rest) = parse_date_prefix(text)?;
    rest.is_empty().then_some(days)
}

fn parse_date_prefix(text: &str) -> Option<(i32, &str)> {
    let bytes = text.as_bytes();
    let (sign, start) = match bytes.first()? {
        b'-' => (-1, 1),
        b'+' => (1, 1),
        _ => (1, 0),
    };
    let year_len = bytes[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if !(4..=6).contains(&year_len) {
        return None;
    }
    let year_end = start + year_len;
    let year: i32 = text[start..year_end].parse().ok()?;
    let rest = &bytes[year_end..];
    if rest.len() < 6 || rest[0] != b'-' || rest[3] != b'-' {
        return None;
    }
    let month = two_digits(&rest[1..3])?;
    let day = two_digits(&rest[4..6])?;
    let date = NaiveDate::from_ymd_opt(sign * year, month, day)?;
    Some((
        date.num_days_from_ce() - UNIX_EPOCH_DAYS_FROM_CE,
        &text[year_end + 6..],
    ))
}

fn two_digits(b: &[u8]) -> Option<u32> {
    match b {
        [a, b] if a.is_ascii_digit() && b.is_ascii_digit() => {
            Some(u32::from(a - b'0') * 10 + u32::from(b - b'0'))
        }
        _ => None,
    }
}

/// A parsed timestamp: microseconds since the epoch (UTC when a zone was
/// given, wall-clock otherwise) and which parts the text had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParsedTimestamp {
    /// Microseconds since 1970-01-01T00:00:00 (zone applied when present).
    pub(crate) micros: i64,
    /// The text had a time of day (else it was a bare date: midnight).
    pub(crate) has_time: bool,
    /// The text had a zone (`Z` or an offset).
    pub(crate) has_zone: bool,
}

/// `YYYY-MM-DD[( |T)HH:MM:SS[.f{1,9}]][Z|±HH[:MM[:SS]]|±HHMM]`. Fractions
/// beyond microseconds are truncated (towards the past).
pub(crate) fn parse_timestamp(text: &str) -> Option<ParsedTimestamp> {
    let (days, rest) = parse_date_prefix(text)?;
    let day_micros = i64::from(days).checked_mul(MICROS_PER_DAY)?;
    if rest.is_empty() {
        return Some(ParsedTimestamp {
            micros: day_micros,
            has_time: false,
            has_zone: false,
        });
    }
    let b = rest.as_bytes();
    if !(b[0] == b'T' || b[0] == b't' || b[0] == b' ')
        || b.len() < 9
        || b[3] != b':'
        || b[6] != b':'
    {
        return None;
    }
    let (h, m, s) = (
        two_digits(&b[1..3])?,
        two_digits(&b[4..6])?,
        two_digits(&b[7..9])?,
    );
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let mut at = 9;
    let mut fraction_micros: i64 = 0;
    if b.get(at) == Some(&b'.') {
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 || digits > 9 {
            return None;
        }
        for (i, d) in b[at + 1..at + 1 + digits].iter().enumerate() {
            if i < 6 {
                fraction_micros = fraction_micros * 10 + i64::from(d - b'0');
            }
        }
        for _ in digits..6 {
            fraction_micros *= 10;
        }
        at += 1 + digits;
    }
    let offset_seconds = parse_zone(&rest[at..])?;
    let time_micros = (i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s)) * MICROS_PER_SECOND
        + fraction_micros;
    let micros = day_micros
        .checked_add(time_micros)?
        .checked_sub(offset_seconds.unwrap_or(0) * MICROS_PER_SECOND)?;
    Some(ParsedTimestamp {
        micros,
        has_time: true,
        has_zone: offset_seconds.is_some(),
    })
}

/// `""` -> `Some(None)`; `Z` or an offset -> `Some(Some(seconds east))`.
fn parse_zone(zone: &str) -> Option<Option<i64>> {
    let b = zone.as_bytes();
    let sign = match b.first() {
        None => return Some(None),
        Some(b'Z' | b'z') if b.len() == 1 => return Some(Some(0)),
        Some(b'+') => 1,
        Some(b'-') => -1,
        Some(_) => return None,
    };
    // (hours, minutes, seconds) byte ranges for each accepted layout.
    let (h, m, sec): (&[u8], &[u8], &[u8]) = match b.len() {
        3 => (&b[1..3], b"00", b"00"),                    // +HH
        5 => (&b[1..3], &b[3..5], b"00"),                 // +HHMM
        6 if b[3] == b':' => (&b[1..3], &b[4..6], b"00"), // +HH:MM
        9 if b[3] == b':' && b[6] == b':' => (&b[1..3], &b[4..6], &b[7..9]), // +HH:MM:SS
        _ => return None,
    };
    let (h, m, sec) = (two_digits(h)?, two_digits(m)?, two_digits(sec)?);
    if h > 18 || m > 59 || sec > 59 {
        return None;
    }
    let seconds = i64::from(h * 3600 + m * 60 + sec);
    Some(Some(sign * seconds))
}
