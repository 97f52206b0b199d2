//! Slots: the values a plan is about (a city, a date, a budget …), drawn once per plan, as text
//! for tasks and outputs and as native JSON for plan inputs and `Variable.value`.

use planrun_legacy::stringify;
use serde_json::Value;

use crate::rng::{float, money, Rng};
use crate::vocab::{
    CHANNELS, CITIES, CURRENCIES, EVENTS, LANGS, MONTHS, ORIGINS, PEOPLE, REPOS, THINGS, TOPICS,
    VENDORS, WEEKDAYS,
};

/// A value a plan is about (a city, a date …): its text in tasks and its native JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Origin,
    City,
    Date,
    Budget,
    Person,
    Topic,
    Weekday,
    Amount,
    Currency,
    Repo,
    Channel,
    Things,
    Month,
    Lang,
    A,
    B,
    Vendor,
    Event,
}

impl Slot {
    const ALL: [Slot; 18] = [
        Slot::Origin,
        Slot::City,
        Slot::Date,
        Slot::Budget,
        Slot::Person,
        Slot::Topic,
        Slot::Weekday,
        Slot::Amount,
        Slot::Currency,
        Slot::Repo,
        Slot::Channel,
        Slot::Things,
        Slot::Month,
        Slot::Lang,
        Slot::A,
        Slot::B,
        Slot::Vendor,
        Slot::Event,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Slot::Origin => "origin",
            Slot::City => "city",
            Slot::Date => "date",
            Slot::Budget => "budget",
            Slot::Person => "person",
            Slot::Topic => "topic",
            Slot::Weekday => "weekday",
            Slot::Amount => "amount",
            Slot::Currency => "currency",
            Slot::Repo => "repo",
            Slot::Channel => "channel",
            Slot::Things => "things",
            Slot::Month => "month",
            Slot::Lang => "lang",
            Slot::A => "a",
            Slot::B => "b",
            Slot::Vendor => "vendor",
            Slot::Event => "event",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Slot> {
        Slot::ALL.into_iter().find(|s| s.name() == name)
    }

    pub(crate) fn draw(self, rng: &mut Rng) -> Value {
        match self {
            Slot::Origin => Value::from(*rng.pick(ORIGINS)),
            Slot::City => Value::from(*rng.pick(CITIES)),
            Slot::Date => Value::from(date(rng)),
            Slot::Budget => Value::from(rng.between(2, 18) * 50),
            Slot::Person => Value::from(rng.pick(PEOPLE).0),
            Slot::Topic => Value::from(*rng.pick(TOPICS)),
            Slot::Weekday => Value::from(*rng.pick(WEEKDAYS)),
            Slot::Amount => money(rng, 20, 5000),
            Slot::Currency => Value::from(*rng.pick(CURRENCIES)),
            Slot::Repo => Value::from(*rng.pick(REPOS)),
            Slot::Channel => Value::from(*rng.pick(CHANNELS)),
            Slot::Things => Value::from(*rng.pick(THINGS)),
            Slot::Month => Value::from(*rng.pick(MONTHS)),
            Slot::Lang => Value::from(rng.pick(LANGS).0),
            Slot::A | Slot::B => {
                if rng.chance(0.7) {
                    Value::from(rng.between(1, 999))
                } else {
                    float(rng.between(1, 9999) as f64 / 10.0)
                }
            }
            Slot::Vendor => Value::from(*rng.pick(VENDORS)),
            Slot::Event => Value::from(*rng.pick(EVENTS)),
        }
    }
}

pub(crate) fn date(rng: &mut Rng) -> String {
    format!("2025-{:02}-{:02}", rng.between(1, 12), rng.between(1, 28))
}

pub(crate) fn datetime(rng: &mut Rng) -> String {
    let offset = rng.pick(&["+00:00", "+01:00", "-05:00", "+09:00"]);
    format!(
        "{}T{:02}:{:02}:00{offset}",
        date(rng),
        rng.between(7, 19),
        rng.pick(&[0, 15, 30, 45])
    )
}

/// The values of one plan (and the runs that reuse it, unless they pass other inputs).
pub(crate) struct Slots {
    pub(crate) native: Vec<Value>,
    pub(crate) text: Vec<String>,
}

impl Slots {
    pub(crate) fn draw(rng: &mut Rng) -> Slots {
        let native: Vec<Value> = Slot::ALL.iter().map(|s| s.draw(rng)).collect();
        let text = native.iter().map(|v| stringify(v.clone())).collect();
        Slots { native, text }
    }

    pub(crate) fn text(&self, slot: Slot) -> &str {
        &self.text[slot as usize]
    }
}
