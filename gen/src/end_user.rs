//! End users (R4+): `<external_id>.json` files as the newest SDK among their runs wrote them
//! last, among them the SDK's default end user `portia:default_user` (the id
//! `Portia.initialize_end_user` gives a run started without one, v0.3.0 to HEAD).

use std::io;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use planrun_legacy::EndUser;
use planrun_legacy::Version::R6;
use planrun_wire::json::to_sdk_json;

use crate::layout::UserSeed;
use crate::rng::Rng;
use crate::summary::{FileKind, GenFile};
use crate::vocab::PEOPLE;
use crate::write::write_new;

pub(crate) fn write_end_user(seed: &UserSeed, out: &Path) -> io::Result<GenFile> {
    let mut rng = Rng::new(seed.seed);
    let user = if seed.external_id == EndUser::SDK_DEFAULT_ID {
        EndUser {
            external_id: seed.external_id.clone(),
            name: String::new(),
            email: String::new(),
            phone_number: String::new(),
            additional_data: IndexMap::new(),
        }
    } else {
        let (name, email) = *rng.pick(PEOPLE);
        let mut data: IndexMap<String, Option<String>> = IndexMap::new();
        if rng.chance(0.6) {
            data.insert(
                "tenant".into(),
                Some((*rng.pick(&["acme", "globex", "initech"])).into()),
            );
        }
        if rng.chance(0.4) {
            data.insert(
                "tier".into(),
                Some((*rng.pick(&["free", "pro", "gold"])).into()),
            );
        }
        if rng.chance(0.2) {
            data.insert(
                "locale".into(),
                Some((*rng.pick(&["pt-PT", "en-GB", "ja-JP", "de-CH"])).into()),
            );
        }
        // `remove_additional_data` sets null from v0.3.5 (R6).
        if seed.version == R6 && rng.chance(0.2) {
            data.insert("previous_plan".into(), None);
        }
        EndUser {
            external_id: seed.external_id.clone(),
            name: if rng.chance(0.8) {
                name.to_owned()
            } else {
                String::new()
            },
            email: if rng.chance(0.7) {
                email.to_owned()
            } else {
                String::new()
            },
            phone_number: if rng.chance(0.3) {
                format!("+44 20 7946 {:04}", rng.below(10_000))
            } else {
                String::new()
            },
            additional_data: data,
        }
    };
    write_new(
        out,
        PathBuf::from(format!("{}.json", seed.external_id)),
        &to_sdk_json(&user),
        FileKind::EndUser,
        seed.version,
    )
}
