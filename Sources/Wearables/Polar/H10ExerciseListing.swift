/// How the SDK finds an H10's recordings (`BDBleApiImpl.listExercises`, H10 file system; iOS
/// `PolarBleApiImpl.listExercises` agrees): GET "/", then every entry whose name ends in "/" is a directory to
/// GET in turn, every entry named `SAMPLES.BPB` a recording, whose identifier is the first path component
/// ("/<identifier>/SAMPLES.BPB"); other entries are ignored. Pure: one directory's listing in, what to GET next
/// and the recordings found out; the driver carries out the GETs.
public enum H10ExerciseListing {
    public static let root = "/"
    public static let samplesFileName = "SAMPLES.BPB"

    public struct Exercise: Sendable, Hashable {
        /// The path to fetch and remove.
        public var path: String
        /// The identifier given at start.
        public var identifier: String
        public var size: UInt64
        public var created: PSFTPDateTime?
    }

    /// What `directory` (a path ending in "/") lists: subdirectories to GET next, in the listing's order, and the
    /// recordings in it.
    public static func step(directory: String, listing: PSFTPDirectory) -> (subdirectories: [String], exercises: [Exercise]) {
        var subdirectories: [String] = []
        var exercises: [Exercise] = []
        for entry in listing.entries {
            let path = directory + entry.name
            if entry.name.hasSuffix("/") {
                subdirectories.append(path)
            } else if entry.name == samplesFileName, let identifier = path.split(separator: "/").first, path.split(separator: "/").count > 1 {
                exercises.append(Exercise(path: path, identifier: String(identifier), size: entry.size, created: entry.created))
            }
        }
        return (subdirectories, exercises)
    }
}
