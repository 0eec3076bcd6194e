//! The validity dates of an X.509 certificate (RFC 5280, section 4.1.2.5), read from its
//! DER, for a certificate taken as a trust anchor as it is: the path check that would
//! read them for a server's certificate does not run on one. Pure; reading never panics.

/// `notBefore` and `notAfter`, in seconds since the Unix epoch.
pub fn validity(der: &[u8]) -> Option<(i64, i64)> {
    let (certificate, _) = element(der, 0x30)?;
    let (mut tbs, _) = element(certificate, 0x30)?;
    // version [0] EXPLICIT, when present; serialNumber; signature; issuer.
    if tbs.first() == Some(&0xa0) {
        tbs = element(tbs, 0xa0)?.1;
    }
    for tag in [0x02, 0x30, 0x30] {
        tbs = element(tbs, tag)?.1;
    }
    let (validity, _) = element(tbs, 0x30)?;
    let (not_before, rest) = time(validity)?;
    let (not_after, _) = time(rest)?;
    Some((not_before, not_after))
}

/// The content of the element of type `tag` at the start of `der`, and what follows it.
fn element(der: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = der.split_first()?;
    if first != tag {
        return None;
    }
    let (&length, rest) = rest.split_first()?;
    let (length, rest) = match length {
        0..=0x7f => (usize::from(length), rest),
        0x81..=0x84 => {
            let count = usize::from(length & 0x7f);
            let bytes = rest.get(..count)?;
            let length = bytes.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b));
            (length, rest.get(count..)?)
        }
        _ => return None,
    };
    Some((rest.get(..length)?, rest.get(length..)?))
}

/// A `Time`: UTCTime (`YYMMDDHHMMSSZ`, years 1950 to 2049) or GeneralizedTime
/// (`YYYYMMDDHHMMSSZ`), as RFC 5280 requires them written.
fn time(der: &[u8]) -> Option<(i64, &[u8])> {
    let (text, rest, century) = match der.first()? {
        0x17 => {
            let (text, rest) = element(der, 0x17)?;
            (text, rest, None)
        }
        _ => {
            let (text, rest) = element(der, 0x18)?;
            (text, rest, Some(()))
        }
    };
    let text = std::str::from_utf8(text).ok()?.strip_suffix('Z')?;
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, at) = match century {
        None if text.len() == 12 => {
            let yy = number(0..2)?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, 2)
        }
        Some(()) if text.len() == 14 => (number(0..4)?, 4),
        _ => return None,
    };
    let [month, day, hour, minute, second] = [0, 2, 4, 6, 8].map(|i| number(at + i..at + i + 2));
    let (month, day, hour, minute, second) = (month?, day?, hour?, minute?, second?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days * 86_400 + hour * 3_600 + minute * 60 + second, rest))
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A self-signed certificate as an appliance makes one (`openssl req -x509 -newkey ec
    /// -pkeyopt ec_paramgen_curve:P-256 -subj /CN=vc01.lab.example -addext
    /// subjectAltName=DNS:vc01.lab.example -days 10000`, OpenSSL 3.0): CA:TRUE, its
    /// notBefore a UTCTime, its notAfter (2054) a GeneralizedTime.
    fn openssl() -> Vec<u8> {
        use rustls::pki_types::pem::PemObject;
        let pem = include_bytes!("../tests/fixtures/self-signed-vcenter.pem");
        rustls::pki_types::CertificateDer::from_pem_slice(pem).unwrap().to_vec()
    }

    #[test]
    fn reads_both_dates_of_a_certificate() {
        // `openssl x509 -noout -dates`: Dec  2 00:33:38 2026 GMT, Apr 19 00:33:38 2054 GMT.
        assert_eq!(validity(&openssl()), Some((1_796_171_618, 2_660_171_618)));
    }

    #[test]
    fn reads_generalized_time_and_the_calendar() {
        let t = |text: &str, tag: u8| {
            let mut der = vec![tag, text.len() as u8];
            der.extend_from_slice(text.as_bytes());
            time(&der).map(|(secs, _)| secs)
        };
        assert_eq!(t("19700101000000Z", 0x18), Some(0));
        assert_eq!(t("20000229120000Z", 0x18), Some(951_825_600));
        assert_eq!(t("500101000000Z", 0x17), Some(-631_152_000));
        assert_eq!(t("491231235959Z", 0x17), Some(2_524_607_999));
        assert_eq!(t("20001301000000Z", 0x18), None);
        assert_eq!(t("2000010100000Z", 0x18), None);
        assert_eq!(t("20000101000000+0100", 0x18), None);
    }

    proptest! {
        #[test]
        fn any_bytes_are_read_or_refused_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = validity(&bytes);
        }

        #[test]
        fn a_cut_certificate_is_refused(cut in 0..120usize) {
            prop_assert_eq!(validity(&openssl()[..cut]), None);
        }
    }
}
