//! Output values: the stored (stringified) value and summary of a step output of each kind,
//! covering every shape the SDK stringifies (text, `""` for None, numbers beyond 64 bits, `NaN`,
//! Python-JSON dicts and lists, compact models, dates, control characters).

use planrun_wire::json::to_python_json;
use serde_json::{Map, Value};

use crate::rng::{float, money, Rng};
use crate::scenarios::Kind;
use crate::slots::{date, datetime, Slot, Slots};
use crate::text::{capitalise, paragraph, report, short_text, two_sentences};
use crate::vocab::{CARRIERS, CONDITIONS, LANGS, PEOPLE};

fn flight(rng: &mut Rng, slots: &Slots) -> Value {
    let (code, name, alliance) = *rng.pick(CARRIERS);
    let mut m = Map::new();
    m.insert(
        "flight_no".into(),
        Value::from(format!("{code}{}", rng.between(100, 9999))),
    );
    m.insert("origin".into(), Value::from(slots.text(Slot::Origin)));
    m.insert("destination".into(), Value::from(slots.text(Slot::City)));
    m.insert(
        "departure".into(),
        Value::from(format!(
            "{}T{:02}:{:02}:00",
            slots.text(Slot::Date),
            rng.between(6, 21),
            rng.pick(&[0, 5, 20, 35, 50])
        )),
    );
    m.insert("price_eur".into(), money(rng, 39, 900));
    m.insert("stops".into(), Value::from(rng.weighted(&[6, 3, 1])));
    let mut carrier = Map::new();
    carrier.insert("name".into(), Value::from(name));
    carrier.insert("alliance".into(), Value::from(alliance));
    m.insert("carrier".into(), Value::Object(carrier));
    Value::Object(m)
}

pub(crate) fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// The stored (stringified) value of a step output of this kind.
pub(crate) fn value(kind: Kind, rng: &mut Rng, slots: &Slots) -> String {
    match kind {
        Kind::Flights => {
            let flights: Vec<Value> = (0..rng.between(4, 12))
                .map(|_| flight(rng, slots))
                .collect();
            to_python_json(&Value::Array(flights))
        }
        Kind::Choice => serde_json::to_string(&flight(rng, slots)).expect("JSON"),
        Kind::Weather => weather(rng, slots),
        Kind::Booking => match rng.weighted(&[5, 3, 2]) {
            0 => format!(
                "Booked {}{} on {}, confirmation code {}",
                rng.pick(CARRIERS).0,
                rng.between(100, 9999),
                slots.text(Slot::Date),
                rng.hex(6).to_uppercase()
            ),
            1 => (*rng.pick(&["confirmed", "pending", "waitlisted"])).to_owned(),
            _ => String::new(),
        },
        Kind::Sent => {
            if rng.chance(0.5) {
                String::new()
            } else {
                format!("Message sent (id {})", rng.hex(16))
            }
        }
        Kind::Number => match rng.weighted(&[8, 4, 1, 1, 1]) {
            0 => rng.between(2, 1998).to_string(),
            1 => format!("{:?}", rng.between(1, 99_999) as f64 / 10.0),
            2 => "NaN".to_owned(),
            3 => format!("-{}", rng.between(1, 500)),
            _ => format!("{}", u128::from(u64::MAX) + rng.between(1, 1 << 20) as u128),
        },
        Kind::Rate => format!("{:?}", rng.between(1, 2_000_000) as f64 / 10_000.0),
        Kind::Verdict => (if rng.chance(0.6) { "true" } else { "false" }).to_owned(),
        Kind::Emails => emails(rng, slots),
        Kind::Summary => {
            let mut out = String::with_capacity(1024);
            paragraph(rng, slots, &mut out);
            if rng.chance(0.6) {
                out.push_str("\n\n");
                paragraph(rng, slots, &mut out);
            }
            out
        }
        Kind::Report => {
            let target = rng.between(3000, 10_000);
            report(rng, slots, target)
        }
        Kind::Sources => sources(rng, slots),
        Kind::Availability => availability(rng, slots),
        Kind::Event => datetime(rng),
        Kind::Date => date(rng),
        Kind::Translation => {
            let lang = slots.text(Slot::Lang);
            LANGS
                .iter()
                .find(|(l, _)| *l == lang)
                .map_or(LANGS[0].1, |(_, t)| t)
                .to_owned()
        }
        Kind::Status => (*rng.pick(&["starred", "already_starred", "not_found"])).to_owned(),
        Kind::JsonText => json_text(rng, slots),
        Kind::Table => table(rng, slots),
        Kind::Count => {
            if rng.chance(0.1) {
                format!("{}", u128::from(u64::MAX) + rng.between(1, 1 << 30) as u128)
            } else {
                rng.between(0, 250_000).to_string()
            }
        }
        Kind::Answer => format!(
            "We sold {} {} in {}.",
            rng.between(0, 25_000),
            slots.text(Slot::Things),
            slots.text(Slot::Month)
        ),
        Kind::KeyPoints => {
            let points: Vec<Value> = (0..rng.between(3, 6))
                .map(|_| Value::from(short_text(rng, slots)))
                .collect();
            to_python_json(&Value::Array(points))
        }
        Kind::File => {
            // bytes decoded as UTF-8 with errors ignored: control characters survive.
            format!(
                "%PDF-1.7\n%\u{7f}\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n\u{0}\u{1}\u{8}\u{c}Invoice {}-{}\tTotal {:.2} EUR\r\n%%EOF",
                slots.text(Slot::Vendor),
                rng.between(1000, 99999),
                rng.between(100, 999_999) as f64 / 100.0
            )
        }
    }
}

/// A weather tool's answer: a sentence, or a JSON object in Python's text.
fn weather(rng: &mut Rng, slots: &Slots) -> String {
    let condition = *rng.pick(CONDITIONS);
    let temp = rng.between(8, 34);
    if rng.chance(0.5) {
        format!(
            "{} in {}, {temp}°C, wind {} km/h",
            capitalise(condition),
            slots.text(Slot::City),
            rng.between(2, 40)
        )
    } else {
        to_python_json(&object(vec![
            ("city", Value::from(slots.text(Slot::City))),
            ("temp_c", float(temp as f64 + rng.below(10) as f64 / 10.0)),
            ("conditions", Value::from(condition)),
            ("humidity", float(rng.between(20, 95) as f64 / 100.0)),
            ("alerts", Value::Array(Vec::new())),
        ]))
    }
}

/// An inbox search's answer: a few emails, in Python's JSON text.
fn emails(rng: &mut Rng, slots: &Slots) -> String {
    let emails: Vec<Value> = (0..rng.between(3, 10))
        .map(|_| {
            let (name, email) = *rng.pick(PEOPLE);
            object(vec![
                ("from", Value::from(format!("{name} <{email}>"))),
                ("subject", Value::from(short_text(rng, slots))),
                ("snippet", Value::from(two_sentences(rng, slots))),
                ("received", Value::from(datetime(rng))),
                ("unread", Value::Bool(true)),
                ("labels", Value::from(vec!["INBOX", "IMPORTANT"])),
            ])
        })
        .collect();
    to_python_json(&Value::Array(emails))
}

/// A web search's answer: scored sources, in Python's JSON text.
fn sources(rng: &mut Rng, slots: &Slots) -> String {
    let sources: Vec<Value> = (0..rng.between(3, 8))
        .map(|i| {
            object(vec![
                ("title", Value::from(short_text(rng, slots))),
                (
                    "url",
                    Value::from(format!(
                        "https://{}.example.com/articles/{}",
                        rng.pick(&["news", "research", "blog", "journal"]),
                        rng.hex(8)
                    )),
                ),
                ("snippet", Value::from(two_sentences(rng, slots))),
                (
                    "score",
                    float((990 - i * rng.between(40, 120)) as f64 / 1000.0),
                ),
            ])
        })
        .collect();
    to_python_json(&Value::Array(sources))
}

/// A calendar's answer: an attendee's free slots and time zone.
fn availability(rng: &mut Rng, slots: &Slots) -> String {
    let slots_free: Vec<Value> = (0..rng.between(0, 4))
        .map(|_| Value::from(datetime(rng)))
        .collect();
    let email = PEOPLE
        .iter()
        .find(|(n, _)| *n == slots.text(Slot::Person))
        .map_or("someone@example.com", |(_, e)| e);
    to_python_json(&object(vec![
        ("attendee", Value::from(email)),
        ("free_slots", Value::Array(slots_free)),
        (
            "timezone",
            Value::from(*rng.pick(&["Europe/Lisbon", "UTC", "America/New_York", "Asia/Tokyo"])),
        ),
    ]))
}

/// A chat tool's answer: a posted message, in Python's or JSON's text.
fn json_text(rng: &mut Rng, slots: &Slots) -> String {
    let message = object(vec![
        ("ok", Value::Bool(true)),
        (
            "channel",
            Value::from(format!("#{}", slots.text(Slot::Channel))),
        ),
        (
            "ts",
            Value::from(format!(
                "17{:08}.{:06}",
                rng.below(99_999_999),
                rng.below(999_999)
            )),
        ),
        (
            "text",
            Value::from(format!("⭐ Starred {}", slots.text(Slot::Repo))),
        ),
    ]);
    if rng.chance(0.5) {
        to_python_json(&message)
    } else {
        serde_json::to_string(&message).expect("JSON")
    }
}

/// A spreadsheet's rows, tab-separated.
fn table(rng: &mut Rng, slots: &Slots) -> String {
    let mut out = String::from("date\tproduct\tunits\trevenue_eur");
    for _ in 0..rng.between(8, 40) {
        out.push_str(&format!(
            "\n{}\t{}\t{}\t{:.2}",
            date(rng),
            slots.text(Slot::Things),
            rng.between(1, 400),
            rng.between(100, 999_999) as f64 / 100.0
        ));
    }
    out
}

/// A summary: text, or `""` or `null` (which stay different).
pub(crate) fn summary(kind: Kind, rng: &mut Rng, slots: &Slots) -> Option<String> {
    match rng.weighted(&[80, 12, 8]) {
        1 => None,
        2 => Some(String::new()),
        _ => Some(match kind {
            Kind::Flights | Kind::Choice => format!(
                "Flights from {} to {} on {}",
                slots.text(Slot::Origin),
                slots.text(Slot::City),
                slots.text(Slot::Date)
            ),
            Kind::Weather => format!("Weather forecast for {}", slots.text(Slot::City)),
            Kind::Emails => format!("Unread emails from {}", slots.text(Slot::Person)),
            Kind::Report | Kind::Summary | Kind::KeyPoints => short_text(rng, slots),
            Kind::Translation => format!("Welcome message in {}", slots.text(Slot::Lang)),
            Kind::Table | Kind::Count | Kind::Answer => {
                format!(
                    "{} sold in {}",
                    capitalise(slots.text(Slot::Things)),
                    slots.text(Slot::Month)
                )
            }
            _ => format!("Result of the {} step", kind_label(kind)),
        }),
    }
}

fn kind_label(kind: Kind) -> &'static str {
    match kind {
        Kind::Booking => "booking",
        Kind::Sent => "email",
        Kind::Number => "calculation",
        Kind::Rate => "conversion",
        Kind::Verdict => "check",
        Kind::Sources => "search",
        Kind::Availability => "availability",
        Kind::Event => "calendar",
        Kind::Date => "date extraction",
        Kind::Status => "GitHub",
        Kind::JsonText => "Slack",
        Kind::File => "Drive",
        _ => "previous",
    }
}
