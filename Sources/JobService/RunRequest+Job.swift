import DownloadEngine
import Logging
import SluiceCore

extension RunRequest {
    /// What a run of `job` asks of the engine, from the job and the service's configuration:
    /// into the documents (or the job's `dir` beneath them) through its partial file, under
    /// the job's and the service's rates, on the service's clock, through the job's proxy,
    /// verifying certificates unless both the job and this node say not to.
    init(
        job: JobSnapshot, partialPath: String, configuration: JobScheduler.Configuration, rateLimiter: RateLimiter,
        priorFailures: Int, neverRun: Bool, checkpoints: any CheckpointStore, logger: Logger
    ) {
        var options = DownloadOptions(
            connections: job.connections, headers: job.headers,
            // What a header announced is learnt again by the run, not held against it.
            expectedChecksum: JobIntegrity.ExpectedSource.isHeader(job.integrity.expectedSource) ? nil : job.expectedChecksum,
            retry: configuration.retry, stallTimeout: configuration.stallTimeout, rateLimiter: rateLimiter
        )
        options.minimumFreeSpace = configuration.minFreeSpace
        options.releaseSlotAfter = configuration.releaseSlotAfter
        options.priorFailures = priorFailures
        options.clock = configuration.clock
        options.proxy = job.proxy.flatMap { try? EndpointURL.proxy($0, field: "proxy") }
        options.hostConnections = configuration.hostConnections
        // Only where this node allows it (a restart without the flag, another node).
        options.insecure = job.insecure && configuration.allowInsecureTLS
        options.neverRun = neverRun
        options.mirrors = job.integrity.mirrors
        if JobIntegrity.ExpectedSource.isHeader(job.integrity.expectedSource), let announced = job.expectedChecksum {
            options.announced = IntegrityFinding(expected: announced, source: job.integrity.expectedSource)
        }
        if job.integrity.checksumURL != nil || job.integrity.signatureURL != nil {
            options.integritySources = IntegritySources(
                // Looked up by the job's URL's name, whichever source serves the file.
                checksumURL: job.integrity.checksumURL,
                checksumName: job.integrity.checksumName ?? Download.remoteName(of: URLCredentials.split(job.url).url),
                signatureURL: job.integrity.signatureURL, keys: configuration.trustedKeys)
        }
        self.init(
            url: job.url,
            target: DownloadTarget(
                partialPath: partialPath,
                destination: .directory(configuration.documentsDirectory + (job.directory.map { "/" + $0 } ?? "")),
                fileName: job.requestedFilename, root: job.directory == nil ? nil : configuration.documentsDirectory
            ),
            options: options, checkpoints: checkpoints, logger: logger
        )
    }
}
