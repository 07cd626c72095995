//! Misuses that used to show only in counters, or nowhere, are loud: an error, or an entry
//! in the frame's report naming the kind and the entity.

use lanyard::codec::{MAX_SECTION_LEN, SectionWriter};
use lanyard::prelude::*;
use lanyard::rapier3d::prelude::RigidBodyBuilder;
use std::sync::Arc;

/// A kind whose server path writes more than a section may hold.
struct Chatty;

impl Controller for Chatty {
    fn server_update(&mut self, _: EntityRef<'_>, _: &WorldView<'_>, out: &mut SectionWriter<'_>) {
        for _ in 0..=MAX_SECTION_LEN {
            out.u8(7);
        }
    }

    fn client_update(
        &mut self,
        _: &mut Entity,
        _: Option<Section<'_>>,
        _: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        Ok(())
    }
}

fn chatty_group() -> EntityGroup {
    let mut r = KindRegistry::new();
    r.register("test.chatty", |_: &u8| Blueprint {
        body: RigidBodyBuilder::fixed().build(),
        colliders: vec![],
        visual: Visual {
            shape: Shape::Ball { radius: 1.0 },
            color: [0; 4],
        },
        controller: Box::new(Chatty),
    })
    .unwrap();
    EntityGroup::new(Arc::new(r), GroupConfig::default())
}

#[test]
fn a_section_too_long_to_send_is_in_the_frames_report() {
    let mut g = chatty_group();
    let id = g.spawn("test.chatty", &0u8, Owner::Server).unwrap();
    let net = g.get(id).unwrap().net_id();
    let report = g.frame();
    assert_eq!(report.sections_written, 0, "nothing went out");
    assert_eq!(
        report.section_errors.len(),
        1,
        "{:?}",
        report.section_errors
    );
    let e = &report.section_errors[0];
    assert_eq!((e.net, e.kind.as_str()), (net, "test.chatty"));
    assert_eq!(
        e.error,
        Error::SectionTooLong {
            len: MAX_SECTION_LEN + 1,
            max: MAX_SECTION_LEN
        }
    );
    assert_eq!(g.counters().oversized_sections, 1);
}

#[test]
fn taking_a_recording_that_was_never_started_is_an_error() {
    let mut g = chatty_group();
    assert_eq!(g.take_recording(), Err(Error::NotRecording));
    g.start_recording("nowhere", "server").unwrap();
    assert!(g.take_recording().is_ok_and(|b| !b.is_empty()));
}
