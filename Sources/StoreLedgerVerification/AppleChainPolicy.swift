import SwiftASN1
import X509

/// The App Store's chain rules on top of RFC 5280: exactly leaf → the header's intermediate → a trusted root,
/// the leaf marked as an App Store receipt-signing certificate and the intermediate as Apple's WWDR CA.
struct AppleChainPolicy: VerifierPolicy {
    /// Marks a leaf that signs App Store data (`1.2.840.113635.100.6.11.1`).
    static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Marks Apple's WWDR intermediate CA (`1.2.840.113635.100.6.2.1`).
    static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// Apple's markers are not critical extensions, so this policy handles none.
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    /// `x5c[1]`: the only certificate allowed between the leaf and the root.
    let intermediate: Certificate

    /// Accepts only `[leaf, intermediate, root]` with Apple's markers and a CA intermediate.
    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(
                reason: "the chain must be leaf → x5c[1] → trusted root, found a chain of \(chain.count)"
            )
        }
        guard chain[1] == intermediate else {
            return .failsToMeetPolicy(reason: "the chain does not pass through x5c[1]")
        }
        if let failure = Self.markerFailure(leaf: chain[0], intermediate: chain[1]) {
            return .failsToMeetPolicy(reason: failure)
        }
        return .meetsPolicy
    }

    /// Why `leaf` / `intermediate` lack Apple's markers or CA status, or `nil` when they have them.
    static func markerFailure(leaf: Certificate, intermediate: Certificate) -> String? {
        guard leaf.extensions[oid: leafMarkerOID] != nil else {
            return "the leaf lacks Apple's App Store signing extension \(leafMarkerOID)"
        }
        guard intermediate.extensions[oid: intermediateMarkerOID] != nil else {
            return "the intermediate lacks Apple's WWDR intermediate extension \(intermediateMarkerOID)"
        }
        switch try? intermediate.extensions.basicConstraints {
        case .isCertificateAuthority:
            return nil
        case .notCertificateAuthority, nil:
            return "the intermediate is not a CA (basicConstraints)"
        }
    }
}
