import ArgumentParser

@main
struct Sluice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A self-hosted HTTP download service, downloader and Range origin.",
        version: "0.1.0",
        subcommands: [
            Serve.self, Get.self, Add.self, Ls.self, Show.self, Pause.self, Resume.self, Rm.self, Wait.self, Watch.self, Queue.self,
            ScheduleCommand.self,
            Token.self, Healthcheck.self,
        ]
    )
}
