import Foundation
import Hummingbird

extension RequestContext {
    /// The route's path parameter `name`, percent-decoded (a client encodes `auth0|42` as `auth0%7C42` and `a@b` as
    /// `a%40b`; Hummingbird hands parameters over as the path has them); nil when the route has no such parameter or
    /// its text is not valid percent-encoding.
    func decodedParameter(_ name: String) -> String? {
        parameters.get(name).flatMap { $0.removingPercentEncoding }
    }
}
