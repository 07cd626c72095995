//! The framework's errors, by concern: [`Error`] for the framework's calls, which wraps
//! [`CodecError`] (a section or packet that does not decode: what a controller's client path
//! meets) and [`RecordError`] (a recording that cannot be written, read or replayed), so a
//! caller can tell them apart and `?` still carries either as an [`Error`].

use crate::id::{EntityId, KindId, NetId};

/// What can go wrong in the `lanyard` framework: a kind, a spawn, an entity, a snapshot, a
/// frame; a section that does not decode ([`Error::Codec`]); a recording
/// ([`Error::Record`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A kind name was registered twice.
    #[error("controller kind '{0}' is already registered")]
    DuplicateKind(String),
    /// A kind was registered with a precision that means nothing: a [`Tolerance`] with a
    /// value that is NaN, infinite, zero or negative.
    ///
    /// [`Tolerance`]: crate::predict::Tolerance
    #[error("controller kind '{kind}' has a bad tolerance: {why}")]
    BadTolerance {
        /// The kind, by name.
        kind: String,
        /// Which value, and what is wrong with it.
        why: String,
    },
    /// Two different names hash to the same kind id.
    #[error("controller kind '{new}' has the same id as '{existing}'; rename one of them")]
    KindIdCollision {
        /// The name already registered.
        existing: String,
        /// The name being registered.
        new: String,
    },
    /// A spawn named a kind that is not registered.
    #[error("unknown controller kind {0}")]
    UnknownKind(KindId),
    /// A spawn named a kind name that is not registered.
    #[error("unknown controller kind '{0}'")]
    UnknownKindName(String),
    /// Spawn parameters could not be encoded or decoded.
    #[error("bad spawn parameters for {kind}: {reason}")]
    BadSpawnParams {
        /// The kind being spawned, by name (by its id where no registry was at hand).
        kind: String,
        /// What the codec said.
        reason: String,
    },
    /// A client's group was asked to spawn an entity itself.
    #[error(
        "a client's group cannot spawn '{kind}' itself: the server gives out the network ids \
         everyone uses, so ask it with EntityGroup::request_spawn (or ClientContext::spawn \
         in a client path)"
    )]
    SpawnOnClient {
        /// The kind, by name.
        kind: String,
    },
    /// A spawn named an owner that is no client of this server.
    #[error("'{kind}' cannot be owned by client {owner}: no such client has a session")]
    NoSuchOwner {
        /// The kind, by name.
        kind: String,
        /// The owner named.
        owner: u16,
    },
    /// A spawn named a client as the owner on a group no network layer drives: no client
    /// has a session there, and nothing would ever run the entity's server path.
    #[error(
        "'{kind}' cannot be owned by client {owner}: no network layer drives this group, so \
         no client has a session (spawn it as Owner::Server, or let a NetManager drive the \
         group, or give it its clients with Replica::set_clients)"
    )]
    NoNetwork {
        /// The kind, by name.
        kind: String,
        /// The owner named.
        owner: u16,
    },
    /// An entity would be built with a non-finite position, rotation or velocity.
    #[error("'{kind}' would be built with a non-finite {what}")]
    NonFinite {
        /// The kind, by name.
        kind: String,
        /// Which value.
        what: &'static str,
    },
    /// A group configuration makes no sense.
    #[error(
        "invalid group configuration: the timestep must be finite and in (0, 1] seconds and \
         gravity finite (got {0})"
    )]
    InvalidConfig(String),
    /// No live entity has this id.
    #[error("no entity {0}")]
    NoSuchEntity(EntityId),
    /// No live entity has this network id.
    #[error("no entity with network id {0}")]
    NoSuchNetId(NetId),
    /// A network id is already in use by a live entity.
    #[error("network id {0} is already in use")]
    NetIdInUse(NetId),
    /// A snapshot could not be read.
    #[error("bad snapshot: {0}")]
    BadSnapshot(String),
    /// A recording (or snapshot) holds the saved state of a kind at another version than
    /// this build's, and no migration covers it.
    #[error(
        "the recording's '{kind}' saved its state as version {recorded}; this build's '{kind}' \
         is version {current} and has no migration from it (KindRegistry::migrate_state), so \
         re-record it"
    )]
    KindStateVersion {
        /// The kind, by name.
        kind: String,
        /// The version in the recording.
        recorded: u16,
        /// This build's version.
        current: u16,
    },
    /// A kind's migration of its saved state failed.
    #[error("migrating the saved state of '{kind}' from version {from}: {reason}")]
    KindStateMigration {
        /// The kind, by name.
        kind: String,
        /// The version it started from.
        from: u16,
        /// What the migration said.
        reason: String,
    },
    /// A spawn gave parameters of another type than the kind's factory takes (bincode
    /// cannot tell two types of the same shape apart, so this is checked by type).
    #[error("spawn parameters for '{kind}' are a `{given}`, but its factory takes a `{expected}`")]
    ParamsType {
        /// The kind, by name.
        kind: String,
        /// The type given.
        given: String,
        /// The type the factory takes.
        expected: String,
    },
    /// Strict mode: a section came from a peer that does not own its entity.
    #[error("a section from {from:?}, which does not own the entity ({owner:?} does)")]
    NotTheOwner {
        /// Who sent it.
        from: crate::id::Owner,
        /// Who owns the entity.
        owner: crate::id::Owner,
    },
    /// Strict mode: a section came for an entity this group does not have.
    #[error("a section from {from:?} for an entity this group does not have")]
    SectionForNoEntity {
        /// Who sent it.
        from: crate::id::Owner,
    },
    /// A controller could not load its saved state.
    #[error("'{kind}' {net} cannot load its saved state: {reason}")]
    BadState {
        /// The kind, by name.
        kind: String,
        /// The entity.
        net: crate::id::NetId,
        /// What `load_state` said.
        reason: String,
    },
    /// The entity's owner sent a section its kind's validation judged illegal: the section
    /// was dropped (and the entity waits for a legal one, or the server's correction).
    #[error("a section from its owner {from:?} was judged illegal and dropped")]
    IllegalSection {
        /// Who sent it.
        from: crate::id::Owner,
    },
    /// The group ran frames its network layer did not drive (both `EntityGroup::frame` and
    /// `NetManager::update` on one group): its world ran that many ticks ahead of what the
    /// network layer sent and took in.
    #[error(
        "the group ran {frames} frame(s) outside NetManager::update: drive a networked group \
         with NetManager::update alone"
    )]
    FramesElsewhere {
        /// How many.
        frames: u64,
    },
    /// A section or packet could not be decoded (see [`CodecError`]).
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// A recording could not be written, read or replayed (see [`RecordError`]).
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// A section or packet that does not decode. Carries only numbers and static text, so
/// reporting a bad packet never allocates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// A read ran past the end of a section or packet.
    #[error("truncated input: needed {needed} more bytes, {remaining} left")]
    Truncated {
        /// Bytes the read needed.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A varint was longer than its type allows.
    #[error("malformed varint")]
    BadVarint,
    /// A value was decoded but is not acceptable (a NaN, an out-of-range index, ...).
    #[error("invalid value: {0}")]
    InvalidValue(&'static str),
    /// A section declared a length larger than the framework allows.
    #[error("section of {len} bytes exceeds the limit of {max}")]
    SectionTooLong {
        /// Declared length.
        len: usize,
        /// The limit ([`crate::codec::MAX_SECTION_LEN`]).
        max: usize,
    },
    /// A controller's section reader left bytes unread: the section does not match its kind.
    #[error("{0} trailing bytes left unread in a section")]
    TrailingBytes(usize),
    /// A client path read part of its section and took it, ignoring the rest: it forgot
    /// [`SectionReader::finish`](crate::codec::SectionReader::finish) (or
    /// [`Section::parse`](crate::codec::Section::parse)), so a longer section than its kind
    /// writes went unnoticed. The section was applied; the frame's report lists it.
    #[error(
        "the client path read {read} of the section's {len} bytes and ignored the rest (call finish)"
    )]
    SectionNotFinished {
        /// How far it read.
        read: usize,
        /// The section's length.
        len: usize,
    },
}

/// A recording that cannot be written, read or replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// A recording could not be written.
    #[error("cannot record: {0}")]
    BadRecording(String),
    /// The file is not a Lanyard recording.
    #[error("not a Lanyard recording (no LNYR header)")]
    NotARecording,
    /// The recording was written in another format version.
    #[error(
        "recording format version {found}; this build reads version {supported} (record it again with this build)"
    )]
    RecordingVersion {
        /// The file's version.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The recording ends in the middle of a record.
    #[error("the recording is truncated{}", tick.map(|t| format!(" at tick {t}")).unwrap_or_else(|| " in its header".into()))]
    RecordingTruncated {
        /// The tick whose record is cut off (none: the header is).
        tick: Option<u64>,
    },
    /// A replay was asked to run past the last recorded tick.
    #[error("the recording ends at tick {end}: it cannot be replayed to tick {asked}")]
    ReplayPastEnd {
        /// The tick asked for.
        asked: u64,
        /// The tick after the last recorded one (where a full replay stops).
        end: u64,
    },
    /// A group was asked to start recording while it already records.
    #[error(
        "the group is already recording: take what it recorded and stop it \
         (EntityGroup::stop_recording) before starting another"
    )]
    AlreadyRecording,
    /// A group was asked to stop recording while it does not record.
    #[error("the group is not recording (EntityGroup::start_recording starts it)")]
    NotRecording,
    /// A record's checksum does not match its bytes.
    #[error("the recording is corrupted{}", tick.map(|t| format!(" at tick {t}")).unwrap_or_else(|| " in its header".into()))]
    RecordingCorrupted {
        /// The tick whose record is damaged (none: the header is).
        tick: Option<u64>,
    },
}

impl Error {
    /// This error, naming the kind `name` where it named it by its id (the codec of spawn
    /// parameters knows only ids; the registry knows names).
    pub(crate) fn naming_kind(self, name: &str) -> Error {
        match self {
            Error::BadSpawnParams { reason, .. } => Error::BadSpawnParams {
                kind: name.to_owned(),
                reason,
            },
            other => other,
        }
    }
}
