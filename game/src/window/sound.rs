//! Sounds (with the `sound` feature): a throw, an explosion, a point, made by
//! [`lanyard_game::sound`] and played when the game's counts go up; M mutes. Without the
//! feature, [`Sounds`] is silent and the build links no audio code.

use lanyard_game::game::Game;
use lanyard_game::kinds::Player;
use macroquad::prelude as mq;
use macroquad::prelude::KeyCode;

/// What the help line adds for the mute key.
pub(crate) const SOUND_HELP: &str = if cfg!(feature = "sound") {
    "  M mute"
} else {
    ""
};

/// The loaded sounds, whether they are muted, and the counts last heard.
pub(crate) struct Sounds {
    #[cfg(feature = "sound")]
    loaded: Vec<(lanyard_game::sound::Cue, macroquad::audio::Sound)>,
    muted: bool,
    heard: lanyard_game::game::Seen,
    throws: u32,
}

impl Sounds {
    /// Loads every cue (none without the feature).
    pub(crate) async fn load() -> Sounds {
        #[cfg(feature = "sound")]
        let loaded = {
            let mut loaded = Vec::new();
            for cue in lanyard_game::sound::Cue::ALL {
                match macroquad::audio::load_sound_from_bytes(&cue.wav()).await {
                    Ok(s) => loaded.push((cue, s)),
                    Err(e) => tracing::warn!("sound {cue:?} did not load: {e}"),
                }
            }
            loaded
        };
        Sounds {
            #[cfg(feature = "sound")]
            loaded,
            muted: false,
            heard: Default::default(),
            throws: 0,
        }
    }

    /// Once a drawn frame: M (unless typing) mutes or unmutes; a new explosion, point or
    /// throw of our own player plays its sound.
    pub(crate) fn frame(&mut self, game: &Game, typing: bool) {
        if !typing && mq::is_key_pressed(KeyCode::M) {
            self.muted = !self.muted;
        }
        let throws = game
            .my_player()
            .and_then(|id| game.group().controller::<Player>(id))
            .map_or(self.throws, |p| p.throws());
        let cues = [
            (lanyard_game::sound::Cue::Throw, throws > self.throws),
            (
                lanyard_game::sound::Cue::Explosion,
                game.presentation().seen().blasts > self.heard.blasts,
            ),
            (
                lanyard_game::sound::Cue::Point,
                game.presentation().seen().points > self.heard.points,
            ),
        ];
        self.throws = throws;
        self.heard = game.presentation().seen();
        if self.muted {
            return;
        }
        for (cue, now) in cues {
            if now {
                self.play(cue);
            }
        }
    }

    #[cfg(feature = "sound")]
    fn play(&self, cue: lanyard_game::sound::Cue) {
        if let Some((_, s)) = self.loaded.iter().find(|(c, _)| *c == cue) {
            macroquad::audio::play_sound_once(s);
        }
    }

    #[cfg(not(feature = "sound"))]
    fn play(&self, _cue: lanyard_game::sound::Cue) {}
}
