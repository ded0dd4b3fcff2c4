import Testing

/// The e-mail/password, identity and ID-token suites run one test at a time: each starts servers
/// and webhook receivers, and all of them at once beside the rest of the suite starved a 2-core
/// machine into request timeouts.
@Suite(.serialized) struct SerialAuthTests {}
