# Sluice: build with the official Swift image, run on a slim Ubuntu as a non-root user.
# Build:  docker build -t sluice .
# Run:    docker run -d -p 8080:8080 -v sluice-data:/data -e SLUICE_TOKEN=change-me sluice

FROM swift:6.3-noble AS build
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-dev zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so that a source change does not refetch them.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Plugins ./Plugins
# Compiled into the binary (the dashboard and openapi.yaml): the image needs no copy of it.
COPY public ./public
# The same command scripts/check-container.sh runs outside Docker.
RUN swift build -c release --static-swift-stdlib --product sluice \
    && install -D "$(swift build -c release --show-bin-path)/sluice" /out/sluice

FROM ubuntu:24.04
# Only what the binary needs at run time (see scripts/check-container.sh): TLS roots, gpgv
# (OpenPGP signatures, as apt checks them), SQLite,
# zlib, and the C++ runtime that the static Swift stdlib still links dynamically.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates gpgv libsqlite3-0 zlib1g libstdc++6 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home --shell /usr/sbin/nologin sluice \
    && mkdir -p /data \
    && chown sluice:sluice /data
COPY --from=build /out/sluice /usr/local/bin/sluice
ENV SLUICE_HOST=0.0.0.0 \
    SLUICE_PORT=8080 \
    SLUICE_DATA=/data
VOLUME ["/data"]
EXPOSE 8080
USER 10001:10001
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["sluice", "healthcheck"]
ENTRYPOINT ["sluice"]
CMD ["serve", "--host", "0.0.0.0", "--data", "/data"]
