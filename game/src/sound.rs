//! The game's sounds, made from numbers rather than files: a throw, an explosion and a
//! crate falling off, as WAV bytes ([`Cue::wav`]). The window plays them when built with
//! the `sound` feature; this module only makes the bytes, so it is tested everywhere.

/// Samples a second.
pub const RATE: u32 = 22_050;

/// A moment that makes a sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cue {
    /// A grenade leaves the hand: a short rising whoosh.
    Throw,
    /// A grenade goes off: a thump and a noise that dies away.
    Explosion,
    /// A point (a crate or a player off the yard): a falling whistle and a chime.
    Point,
}

impl Cue {
    /// Every cue.
    pub const ALL: [Cue; 3] = [Cue::Throw, Cue::Explosion, Cue::Point];

    /// How long it lasts, seconds.
    pub fn seconds(self) -> f32 {
        match self {
            Cue::Throw => 0.25,
            Cue::Explosion => 0.9,
            Cue::Point => 0.5,
        }
    }

    /// Its samples, in -1..=1 at [`RATE`], the same every time.
    pub fn samples(self) -> Vec<f32> {
        let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
        let n = (self.seconds() * RATE as f32) as usize;
        (0..n)
            .map(|i| self.at(i as f32 / RATE as f32, &mut noise).clamp(-1.0, 1.0))
            .collect()
    }

    /// The sample `t` seconds in.
    fn at(self, t: f32, noise: &mut Noise) -> f32 {
        let tone = |hz: f32| (std::f32::consts::TAU * hz * t).sin();
        match self {
            Cue::Throw => {
                let envelope = (t / 0.03).min(1.0) * (1.0 - t / 0.25).max(0.0);
                let whoosh = noise.next() * tone(150.0 + 700.0 * t).abs();
                envelope * (0.5 * whoosh + 0.1 * noise.next())
            }
            Cue::Explosion => {
                let thump = (-t * 9.0).exp() * tone(70.0 - 40.0 * t);
                let rumble = (-t * 6.0).exp() * noise.next();
                0.7 * thump + 0.6 * rumble
            }
            Cue::Point => {
                if t < 0.2 {
                    0.35 * tone(1200.0 - 2000.0 * t)
                } else {
                    let k = (-(t - 0.2) * 12.0).exp();
                    0.4 * k * (tone(880.0) + 0.5 * tone(1320.0))
                }
            }
        }
    }

    /// Its sound as a WAV file's bytes (16-bit mono PCM).
    pub fn wav(self) -> Vec<u8> {
        wav(&self.samples())
    }
}

/// A little generator of noise in -1..=1 (xorshift).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// Samples in -1..=1 as a WAV file at [`RATE`]: 16-bit mono PCM.
pub fn wav(samples: &[f32]) -> Vec<u8> {
    let data = (samples.len() * 2) as u32;
    let mut out = Vec::with_capacity(44 + data as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&RATE.to_le_bytes());
    out.extend_from_slice(&(RATE * 2).to_le_bytes()); // bytes a second
    out.extend_from_slice(&2u16.to_le_bytes()); // bytes a frame
    out.extend_from_slice(&16u16.to_le_bytes()); // bits a sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data.to_le_bytes());
    for s in samples {
        let v = (s.clamp(-1.0, 1.0) * f32::from(i16::MAX)).round() as i16;
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cue_is_a_wav_of_audible_samples_that_never_clip_and_end_quietly() {
        for cue in Cue::ALL {
            let s = cue.samples();
            assert!(s.len() > RATE as usize / 10, "{cue:?} is too short");
            let loudest = s.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            assert!(
                loudest > 0.2 && loudest <= 1.0,
                "{cue:?} peaks at {loudest}"
            );
            let tail = &s[s.len() - s.len() / 20..];
            let tail_peak = tail.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            assert!(tail_peak < loudest / 2.0, "{cue:?} ends with a click");
            let w = cue.wav();
            assert_eq!(&w[..4], b"RIFF");
            assert_eq!(&w[8..16], b"WAVEfmt ");
            assert_eq!(w.len(), 44 + 2 * s.len());
            let riff = u32::from_le_bytes(w[4..8].try_into().unwrap());
            assert_eq!(riff as usize, w.len() - 8);
        }
        assert_eq!(
            Cue::Explosion.wav(),
            Cue::Explosion.wav(),
            "the same every time"
        );
    }
}
