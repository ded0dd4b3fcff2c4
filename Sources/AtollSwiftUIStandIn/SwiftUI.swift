// A stand-in for the few SwiftUI names Atoll's SwiftUI wrappers use, with SwiftUI's signatures
// (iOS 18 / macOS 15 SDK), so the wrappers compile and run on Linux: SwiftUIShellTests builds
// the wrappers' source files against this module. Only what the wrappers touch, and working
// simply enough to drive them in tests (State keeps its value in a box; Environment reads
// `EnvironmentValues.current`). Not a SwiftUI: no rendering, no diffing.
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

// MARK: Properties

public protocol DynamicProperty {
    mutating func update()
}

extension DynamicProperty {
    public mutating func update() {}
}

@propertyWrapper @dynamicMemberLookup
public struct Binding<Value> {
    private let getValue: () -> Value
    private let setValue: (Value) -> Void

    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        getValue = get
        setValue = set
    }

    public static func constant(_ value: Value) -> Binding<Value> { Binding(get: { value }, set: { _ in }) }

    public var wrappedValue: Value {
        get { getValue() }
        nonmutating set { setValue(newValue) }
    }

    public var projectedValue: Binding<Value> { self }

    public subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> {
        Binding<Subject>(get: { self.wrappedValue[keyPath: keyPath] }, set: { self.wrappedValue[keyPath: keyPath] = $0 })
    }
}

@propertyWrapper
public struct State<Value>: DynamicProperty {
    private final class Box { var value: Value; init(_ value: Value) { self.value = value } }
    private let box: Box

    public init(wrappedValue value: Value) { box = Box(value) }
    public init(initialValue value: Value) { box = Box(value) }

    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.value = newValue }
    }

    public var projectedValue: Binding<Value> {
        let box = box
        return Binding(get: { box.value }, set: { box.value = $0 })
    }
}

extension State where Value: ExpressibleByNilLiteral {
    public init() { self.init(wrappedValue: nil) }
}

@MainActor @preconcurrency @propertyWrapper
public struct ObservedObject<ObjectType>: DynamicProperty where ObjectType: ObservableObject {
    @MainActor @preconcurrency @dynamicMemberLookup
    public struct Wrapper {
        let root: ObjectType
        public subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<ObjectType, Subject>) -> Binding<Subject> {
            let root = root
            return Binding(get: { root[keyPath: keyPath] }, set: { root[keyPath: keyPath] = $0 })
        }
    }

    public init(initialValue: ObjectType) { wrappedValue = initialValue }
    public init(wrappedValue: ObjectType) { self.wrappedValue = wrappedValue }

    public var wrappedValue: ObjectType
    public var projectedValue: ObservedObject<ObjectType>.Wrapper { Wrapper(root: wrappedValue) }
}

@MainActor @preconcurrency @propertyWrapper
public struct StateObject<ObjectType>: DynamicProperty where ObjectType: ObservableObject {
    private final class Box {
        let make: () -> ObjectType
        lazy var object: ObjectType = make()
        init(_ make: @escaping () -> ObjectType) { self.make = make }
    }
    private let box: Box

    public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) { box = Box(thunk) }

    public var wrappedValue: ObjectType { box.object }
    public var projectedValue: ObservedObject<ObjectType>.Wrapper { ObservedObject.Wrapper(root: box.object) }
}

/// What SwiftUI does before it evaluates a view's body: updates each of its dynamic properties.
@MainActor public func _updateDynamicProperties<V>(of view: V) {
    for child in Mirror(reflecting: view).children {
        if var property = child.value as? any DynamicProperty { property.update() }
    }
}

// MARK: Environment

public protocol EnvironmentKey {
    associatedtype Value
    static var defaultValue: Self.Value { get }
}

public struct EnvironmentValues: CustomStringConvertible {
    private var values: [ObjectIdentifier: Any] = [:]

    public init() {}

    public subscript<K>(key: K.Type) -> K.Value where K: EnvironmentKey {
        get { values[ObjectIdentifier(key)] as? K.Value ?? K.defaultValue }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    public var description: String { "EnvironmentValues(\(values.count))" }

    /// The stand-in's environment, which every `@Environment` reads (tests set it).
    @MainActor public static var current = EnvironmentValues()
}

@MainActor @preconcurrency @propertyWrapper
public struct Environment<Value>: DynamicProperty {
    private let keyPath: KeyPath<EnvironmentValues, Value>

    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) { self.keyPath = keyPath }

    public var wrappedValue: Value { EnvironmentValues.current[keyPath: keyPath] }
}

// MARK: Views

@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

extension Never: View {
    public typealias Body = Never
    public var body: Never { fatalError() }
}

@frozen public struct EmptyView: View {
    nonisolated public init() {}
    public var body: Never { fatalError() }
}

/// A view with a modifier applied: what the stand-in's modifiers return.
public struct ModifiedView<Content: View>: View {
    public let content: Content
    public var body: Never { fatalError() }
}

@resultBuilder
public struct ViewBuilder {
    public static func buildBlock() -> EmptyView { EmptyView() }
    public static func buildBlock<Content>(_ content: Content) -> Content where Content: View { content }
    public static func buildExpression<Content>(_ content: Content) -> Content where Content: View { content }
}

public struct Text: Equatable, View {
    let content: String
    public init<S>(_ content: S) where S: StringProtocol { self.content = String(content) }
    public init(_ key: LocalizedStringKey) { content = key.key }
    public var body: Never { fatalError() }
}

@frozen public struct LocalizedStringKey: Equatable, ExpressibleByStringInterpolation {
    let key: String
    public init(_ value: String) { key = value }
    public init(stringLiteral value: String) { key = value }
}

public struct SearchFieldPlacement: Sendable {
    public static let automatic = SearchFieldPlacement()
}

extension View {
    public func environment<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V) -> some View {
        EnvironmentValues.current[keyPath: keyPath] = value
        return ModifiedView(content: self)
    }

    public func searchable(text: Binding<String>, placement: SearchFieldPlacement = .automatic, prompt: Text? = nil) -> some View {
        ModifiedView(content: self)
    }

    public func searchable(text: Binding<String>, placement: SearchFieldPlacement = .automatic, prompt: LocalizedStringKey) -> some View {
        ModifiedView(content: self)
    }

    public func searchable<S>(text: Binding<String>, placement: SearchFieldPlacement = .automatic, prompt: S) -> some View
    where S: StringProtocol {
        ModifiedView(content: self)
    }

    public func searchable<S>(text: Binding<String>, placement: SearchFieldPlacement = .automatic, prompt: Text? = nil,
                              @ViewBuilder suggestions: () -> S) -> some View where S: View {
        ModifiedView(content: self)
    }

    public func searchable<S>(text: Binding<String>, placement: SearchFieldPlacement = .automatic, prompt: LocalizedStringKey,
                              @ViewBuilder suggestions: () -> S) -> some View where S: View {
        ModifiedView(content: self)
    }

    public func searchable<V, S>(text: Binding<String>, placement: SearchFieldPlacement = .automatic, prompt: S,
                                 @ViewBuilder suggestions: () -> V) -> some View where V: View, S: StringProtocol {
        ModifiedView(content: self)
    }
}
