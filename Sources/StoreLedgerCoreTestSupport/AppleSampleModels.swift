package import Foundation

/// Apple's sample notification payloads and App Store Server API answers (`AppleSamples/models`, MIT, copied
/// unchanged from app-store-server-library-swift; LICENSE.txt beside them), shared by the Core, App Store API and
/// simulation tests so that one copy is the reference for all three.
package enum AppleSampleModels {
    /// The bytes of the sample `name.json` (for example `signedNotification`).
    package static func data(named name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "AppleSamples/models") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "AppleSamples/models/\(name).json"])
        }
        return try Data(contentsOf: url)
    }
}
