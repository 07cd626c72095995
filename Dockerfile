# The dedicated Tumbleyard server in a container (no window, no graphics libraries).
#   docker build -t tumbleyard .
#   docker run --rm -p 47810:47810/udp tumbleyard
# Configure it with the flags of `lanyard-game server` or their LANYARD_* variables
# (LANYARD_PORT, LANYARD_NAME, LANYARD_PASSWORD, LANYARD_MAX_PLAYERS, LANYARD_RATE,
# LANYARD_GRACE, LANYARD_MAX_SPECTATORS). Under Agones it reports ready and healthy by
# itself (game/deploy/agones-gameserver.yaml). SIGTERM ends it gracefully.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p lanyard-game --no-default-features

FROM debian:bookworm-slim
RUN useradd --system --home /srv/tumbleyard tumbleyard
WORKDIR /srv/tumbleyard
COPY --from=build /src/target/release/lanyard-game /usr/local/bin/lanyard-game
COPY assets ./assets
USER tumbleyard
ENV LANYARD_PORT=47810
EXPOSE 47810/udp
ENTRYPOINT ["lanyard-game", "server"]
