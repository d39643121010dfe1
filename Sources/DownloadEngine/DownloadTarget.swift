/// Where a download's bytes go while it runs and where the finished file ends up.
public struct DownloadTarget: Sendable {
    public enum Destination: Sendable, Equatable {
        /// Into this directory under the download's name, with ` (1)`, ` (2)`, ... when
        /// the name is taken; nothing there is ever overwritten.
        case directory(String)
        /// Exactly this path, replacing what is there (`sluice get -o FILE`).
        case file(String)
    }

    /// The partial file the bytes are written into, at their offsets.
    public var partialPath: String
    public var destination: Destination
    /// The name the user asked for; nil lets the response decide.
    public var fileName: String?
    /// A directory `destination` lies inside: the directories between them are made at
    /// placement when missing, and each must resolve inside it (a symlink leading out
    /// fails the download). Nil when `destination` is there already.
    public var root: String?

    public init(partialPath: String, destination: Destination, fileName: String? = nil, root: String? = nil) {
        self.partialPath = partialPath
        self.destination = destination
        self.fileName = fileName
        self.root = root
    }
}
