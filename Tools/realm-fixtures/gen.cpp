// Fixture generator for the Atoll project.
// Writes Realm files with realm-core's object store (Realm::get_shared_realm +
// Schema/ObjectSchema/Property), then reopens each file read-only and dumps
// every object's every property to JSON (expected_<file>.json).
//
// Usage: gen <outdir>
//        gen --tasks-w1 [<outdir>]   writes only tasks_w1_100k.realm (compacted), prints samples
//        gen --synced-tasks [<outdir>]   writes only synced_tasks_v0.realm (compacted, 50 SyncedTask objects)

#include <realm/object-store/shared_realm.hpp>
#include <realm/object-store/schema.hpp>
#include <realm/object-store/object_schema.hpp>
#include <realm/object-store/property.hpp>
#include <realm/object-store/object_store.hpp>
#include <realm/object-store/util/scheduler.hpp>
#include <realm/list.hpp>
#include <realm/set.hpp>
#include <realm/dictionary.hpp>
#include <realm/table.hpp>
#include <realm/group.hpp>
#include <realm/obj.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace realm;
namespace fs = std::filesystem;

using PT = PropertyType;

// ---------------------------------------------------------------- JSON helpers

static std::string jstr(std::string_view s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                }
                else {
                    out += char(c);
                }
        }
    }
    return out + "\"";
}

static std::string hex(const void* p, size_t n)
{
    static const char* d = "0123456789abcdef";
    std::string out;
    auto b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
        out += d[b[i] >> 4];
        out += d[b[i] & 15];
    }
    return out;
}

template <class F>
static std::string jnum(F v)
{
    if (std::isnan(v))
        return "\"nan\"";
    if (std::isinf(v))
        return v > 0 ? "\"inf\"" : "\"-inf\"";
    if (v == 0 && std::signbit(v))
        return "-0.0"; // keep the sign visible to JSON parsers
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v); // shortest round-trip form
    return std::string(buf, r.ptr);
}

static std::string jobj(const std::vector<std::pair<std::string, std::string>>& kv, int indent = -1)
{
    if (kv.empty())
        return "{}";
    std::string out = "{";
    bool first = true;
    for (auto& [k, v] : kv) {
        if (!first)
            out += ",";
        first = false;
        if (indent >= 0)
            out += "\n" + std::string(indent + 2, ' ');
        out += jstr(k) + ": " + v;
    }
    if (indent >= 0)
        out += "\n" + std::string(indent, ' ');
    return out + "}";
}

static std::string jarr(const std::vector<std::string>& v, int indent = -1)
{
    if (v.empty())
        return "[]";
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i)
            out += ",";
        if (indent >= 0)
            out += "\n" + std::string(indent + 2, ' ');
        out += v[i];
    }
    if (indent >= 0)
        out += "\n" + std::string(indent, ' ');
    return out + "]";
}

// ---------------------------------------------------------------- value dumping

struct Dumper {
    const Group& g;
    const Schema& schema;

    std::string class_name(ConstTableRef t)
    {
        std::string n = t->get_name();
        return n.rfind("class_", 0) == 0 ? n.substr(6) : n;
    }

    std::string link(ConstTableRef target, ObjKey key)
    {
        if (!key)
            return "null";
        std::vector<std::pair<std::string, std::string>> kv{{"class", jstr(class_name(target))}};
        if (key.is_unresolved()) {
            kv.push_back({"unresolved", "true"});
        }
        else if (target->is_embedded()) {
            return jobj({{"embedded", object_body(target->get_object(key))}});
        }
        else if (target->get_primary_key_column()) {
            kv.push_back({"pk", scalar(target->get_object(key).get_primary_key(), nullptr, ColKey())});
        }
        else {
            kv.push_back({"objKey", std::to_string(key.value)});
        }
        return jobj({{"link", jobj(kv)}});
    }

    // A single value in tagged form: {"int": 1}, {"string": "x"}, ... or null.
    std::string scalar(Mixed m, ConstTableRef link_target, ColKey)
    {
        if (m.is_null())
            return "null";
        switch (m.get_type()) {
            case type_Int:
                return jobj({{"int", std::to_string(m.get_int())}});
            case type_Bool:
                return jobj({{"bool", m.get_bool() ? "true" : "false"}});
            case type_String:
                return jobj({{"string", jstr(std::string(m.get_string()))}});
            case type_Binary: {
                auto b = m.get_binary();
                return jobj({{"data", jstr(hex(b.data(), b.size()))}});
            }
            case type_Timestamp: {
                auto t = m.get_timestamp();
                return jobj({{"timestamp", jobj({{"seconds", std::to_string(t.get_seconds())},
                                                 {"nanoseconds", std::to_string(t.get_nanoseconds())}})}});
            }
            case type_Float:
                return jobj({{"float", jnum(m.get_float())}});
            case type_Double:
                return jobj({{"double", jnum(m.get_double())}});
            case type_Decimal: {
                auto d = m.get_decimal();
                auto raw = d.raw();
                char buf[40];
                snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)raw->w[1],
                         (unsigned long long)raw->w[0]);
                return jobj({{"decimal", jstr(d.to_string())}, {"bid128", jstr(buf)}});
            }
            case type_ObjectId:
                return jobj({{"objectId", jstr(m.get_object_id().to_string())}});
            case type_UUID:
                return jobj({{"uuid", jstr(m.get_uuid().to_string())}});
            case type_Link:
                return link(link_target, m.get<ObjKey>());
            case type_TypedLink: {
                auto l = m.get_link();
                return link(g.get_table(l.get_table_key()), l.get_obj_key());
            }
            default:
                return "\"<unsupported type>\"";
        }
    }

    std::string mixed_list(const Lst<Mixed>& l)
    {
        std::vector<std::string> out;
        for (size_t i = 0; i < l.size(); ++i) {
            Mixed m = l.get_any(i);
            if (m.is_type(type_List))
                out.push_back(jobj({{"list", mixed_list(*l.get_list(i))}}));
            else if (m.is_type(type_Dictionary))
                out.push_back(jobj({{"dictionary", mixed_dict(*l.get_dictionary(i))}}));
            else
                out.push_back(scalar(m, nullptr, ColKey()));
        }
        return jarr(out);
    }

    std::string mixed_dict(const Dictionary& d)
    {
        std::vector<std::pair<std::string, std::string>> out;
        for (size_t i = 0; i < d.size(); ++i) {
            auto [k, m] = d.get_pair(i);
            std::string key(k.get_string());
            if (m.is_type(type_List))
                out.push_back({key, jobj({{"list", mixed_list(*d.get_list(StringData(key)))}})});
            else if (m.is_type(type_Dictionary))
                out.push_back({key, jobj({{"dictionary", mixed_dict(*d.get_dictionary(StringData(key)))}})});
            else
                out.push_back({key, scalar(m, nullptr, ColKey())});
        }
        return jobj(out);
    }

    std::string property(const Obj& obj, const ObjectSchema& os, const Property& p)
    {
        auto table = obj.get_table();
        if (p.type == PT::LinkingObjects || (p.type & ~PT::Flags) == PT::LinkingObjects) {
            auto origin = ObjectStore::table_for_object_type(g, p.object_type);
            auto origin_col = origin->get_column_key(
                schema.find(p.object_type)->property_for_name(p.link_origin_property_name)->name);
            std::vector<std::string> out;
            size_t n = obj.get_backlink_count(*origin, origin_col);
            for (size_t i = 0; i < n; ++i)
                out.push_back(link(origin, obj.get_backlink(*origin, origin_col, i)));
            return jarr(out);
        }
        ColKey col = table->get_column_key(p.name);
        ConstTableRef target = col.get_type() == col_type_Link ? table->get_link_target(col) : ConstTableRef();
        if (col.is_dictionary()) {
            auto d = obj.get_dictionary(col);
            if (col.get_type() == col_type_Mixed)
                return mixed_dict(d);
            std::vector<std::pair<std::string, std::string>> out;
            for (size_t i = 0; i < d.size(); ++i) {
                auto [k, m] = d.get_pair(i);
                out.push_back({std::string(k.get_string()), scalar(m, target, col)});
            }
            return jobj(out);
        }
        if (col.is_list() && col.get_type() == col_type_Mixed)
            return mixed_list(*obj.get_list_ptr<Mixed>(col));
        if (col.is_collection()) {
            auto c = obj.get_collection_ptr(col);
            std::vector<std::string> out;
            for (size_t i = 0; i < c->size(); ++i)
                out.push_back(scalar(c->get_any(i), target, col));
            return jarr(out);
        }
        Mixed m = obj.get_any(col);
        if (m.is_type(type_List))
            return jobj({{"list", mixed_list(*obj.get_list_ptr<Mixed>(col))}});
        if (m.is_type(type_Dictionary))
            return jobj({{"dictionary", mixed_dict(*obj.get_dictionary_ptr(col))}});
        return scalar(m, target, col);
    }

    std::string object_body(const Obj& obj, int indent = -1)
    {
        const ObjectSchema& os = *schema.find(class_name(obj.get_table()));
        std::vector<std::pair<std::string, std::string>> kv;
        for (auto& p : os.persisted_properties)
            kv.push_back({p.name, property(obj, os, p)});
        for (auto& p : os.computed_properties)
            kv.push_back({p.name, property(obj, os, p)});
        return jobj(kv, indent);
    }

    std::string object(const Obj& obj, int indent)
    {
        return jobj({{"objKey", std::to_string(obj.get_key().value)}, {"properties", object_body(obj, indent + 2)}},
                    indent);
    }
};

static std::string type_name(PT t)
{
    switch (t & ~PT::Flags) {
        case PT::Int: return "int";
        case PT::Bool: return "bool";
        case PT::String: return "string";
        case PT::Data: return "data";
        case PT::Date: return "date";
        case PT::Float: return "float";
        case PT::Double: return "double";
        case PT::Object: return "object";
        case PT::LinkingObjects: return "linkingObjects";
        case PT::Mixed: return "mixed";
        case PT::ObjectId: return "objectId";
        case PT::Decimal: return "decimal";
        case PT::UUID: return "uuid";
        default: return "?";
    }
}

static std::string schema_json(const ObjectSchema& os, int indent)
{
    auto prop = [&](const Property& p) {
        std::vector<std::pair<std::string, std::string>> kv{{"name", jstr(p.name)}};
        if (!p.public_name.empty())
            kv.push_back({"publicName", jstr(p.public_name)});
        kv.push_back({"type", jstr(type_name(p.type))});
        kv.push_back({"optional", is_nullable(p.type) ? "true" : "false"});
        std::string coll = is_array(p.type) ? "\"list\"" : is_set(p.type) ? "\"set\"" : is_dictionary(p.type) ? "\"dictionary\"" : "null";
        kv.push_back({"collection", coll});
        if (!p.object_type.empty())
            kv.push_back({"objectType", jstr(p.object_type)});
        if (!p.link_origin_property_name.empty())
            kv.push_back({"originProperty", jstr(p.link_origin_property_name)});
        if (p.is_primary)
            kv.push_back({"primaryKey", "true"});
        if (p.is_indexed)
            kv.push_back({"indexed", "true"});
        return jobj(kv);
    };
    std::vector<std::string> props, computed;
    for (auto& p : os.persisted_properties)
        props.push_back(prop(p));
    for (auto& p : os.computed_properties)
        computed.push_back(prop(p));
    std::string tt = os.table_type == ObjectSchema::ObjectType::Embedded ? "embedded"
                     : os.table_type == ObjectSchema::ObjectType::TopLevelAsymmetric ? "asymmetric"
                                                                                      : "topLevel";
    return jobj({{"table", jstr("class_" + os.name)},
                 {"tableType", jstr(tt)},
                 {"primaryKey", os.primary_key.empty() ? "null" : jstr(os.primary_key)},
                 {"properties", jarr(props, indent + 2)},
                 {"computedProperties", jarr(computed, indent + 2)}},
                indent);
}

// sample_keys: if non-empty, only these objects (by pk) are dumped per class in addition to a count.
static void dump_file(const fs::path& file, const Schema& schema, const std::vector<char>& key,
                      const fs::path& json_out, size_t max_objects_per_class = SIZE_MAX,
                      std::vector<std::pair<std::string, std::string>> extra = {})
{
    RealmConfig config;
    config.path = file.string();
    config.schema_mode = SchemaMode::Immutable; // opens the file read-only, writes nothing
    config.encryption_key = key;
    auto realm = Realm::get_shared_realm(config);
    auto& g = realm->read_group();
    Dumper d{g, schema};
    std::vector<std::pair<std::string, std::string>> classes;
    for (auto& os : schema) {
        auto t = ObjectStore::table_for_object_type(g, os.name);
        std::vector<std::string> objs;
        size_t n = 0;
        for (auto obj : *t) {
            if (n++ >= max_objects_per_class)
                break;
            objs.push_back(d.object(obj, 8));
        }
        classes.push_back({os.name, jobj({{"schema", schema_json(os, 6)},
                                          {"objectCount", std::to_string(t->size())},
                                          {"objectsListed", std::to_string(objs.size())},
                                          {"objects", jarr(objs, 6)}},
                                         4)});
    }
    std::vector<std::pair<std::string, std::string>> top{
        {"file", jstr(file.filename().string())},
        {"schemaVersion", std::to_string(ObjectStore::get_schema_version(g))},
        {"encryptionKeyHex", key.empty() ? "null" : jstr(hex(key.data(), key.size()))},
        {"notes", jstr("Values are tagged: {\"int\":n}, {\"bool\":b}, {\"string\":s}, {\"data\":hex}, "
                       "{\"timestamp\":{\"seconds\":s,\"nanoseconds\":ns}}, {\"float\":x}, {\"double\":x} "
                       "(nan/inf/-inf as strings), {\"decimal\":string,\"bid128\":hex(high64,low64)}, "
                       "{\"objectId\":hex}, {\"uuid\":string}, {\"link\":{\"class\":C,\"pk\":tagged}} "
                       "(or \"objKey\" for classes without primary key), {\"embedded\":{props}}, "
                       "Mixed nested collections {\"list\":[...]} / {\"dictionary\":{...}}; null is JSON null. "
                       "List/set properties are JSON arrays in storage order; dictionary properties are JSON "
                       "objects in storage order. Objects are listed in table iteration (ObjKey) order. "
                       "Computed (LinkingObjects) properties are listed after persisted ones.")}};
    for (auto& e : extra)
        top.push_back(e);
    top.push_back({"classes", jobj(classes, 2)});
    std::ofstream(json_out) << jobj(top, 0) << "\n";
}

static void remove_aux(const fs::path& file)
{
    fs::remove(file.string() + ".lock");
    fs::remove(file.string() + ".note");
    fs::remove_all(file.string() + ".management");
    fs::remove(file.string() + ".fresh.lock");
}

// ---------------------------------------------------------------- value makers

static ObjectId oid(const char* s)
{
    return ObjectId(StringData(s));
}
static UUID uuid(const char* s)
{
    return UUID(StringData(s));
}
static Decimal128 dec(const char* s)
{
    return Decimal128(StringData(s));
}
static std::string bytes(size_t n, int mul = 7, int add = 0)
{
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i)
        s[i] = char((i * mul + add) & 0xff);
    return s;
}
static BinaryData bin(const std::string& s)
{
    return BinaryData(s.data(), s.size());
}
// n characters; 'x' gives "xxx...", 'a' gives "abc...zabc..."
static std::string rep(size_t n, char c = 'x')
{
    std::string s;
    for (size_t i = 0; i < n; ++i)
        s += c == 'a' ? char('a' + i % 26) : c;
    return s;
}

// ---------------------------------------------------------------- allTypes

static Schema all_types_schema()
{
    auto P = [](const char* name, PT t) {
        return Property(name, t);
    };
    auto L = [](const char* name, PT t, const char* target) {
        return Property(name, t, target);
    };
    return Schema{
        ObjectSchema("AllTypes",
                     {
                         Property("_id", PT::ObjectId, Property::IsPrimary{true}),
                         P("bool", PT::Bool),
                         P("int", PT::Int),
                         P("float", PT::Float),
                         P("double", PT::Double),
                         P("string", PT::String),
                         P("data", PT::Data),
                         P("date", PT::Date),
                         P("decimal", PT::Decimal),
                         P("objectId", PT::ObjectId),
                         P("uuid", PT::UUID),
                         P("mixed", PT::Mixed | PT::Nullable),
                         P("optBool", PT::Bool | PT::Nullable),
                         P("optInt", PT::Int | PT::Nullable),
                         P("optFloat", PT::Float | PT::Nullable),
                         P("optDouble", PT::Double | PT::Nullable),
                         P("optString", PT::String | PT::Nullable),
                         P("optData", PT::Data | PT::Nullable),
                         P("optDate", PT::Date | PT::Nullable),
                         P("optDecimal", PT::Decimal | PT::Nullable),
                         P("optObjectId", PT::ObjectId | PT::Nullable),
                         P("optUuid", PT::UUID | PT::Nullable),
                         L("link", PT::Object | PT::Nullable, "Target"),
                         L("embedded", PT::Object | PT::Nullable, "Embedded"),
                         L("embeddedList", PT::Object | PT::Array, "Embedded"),
                         P("intList", PT::Int | PT::Array),
                         P("stringList", PT::String | PT::Array),
                         P("optIntList", PT::Int | PT::Nullable | PT::Array),
                         P("dateList", PT::Date | PT::Array),
                         P("decimalList", PT::Decimal | PT::Array),
                         P("uuidList", PT::UUID | PT::Array),
                         P("objectIdList", PT::ObjectId | PT::Array),
                         P("dataList", PT::Data | PT::Array),
                         P("doubleList", PT::Double | PT::Array),
                         P("floatList", PT::Float | PT::Array),
                         P("boolList", PT::Bool | PT::Array),
                         P("mixedList", PT::Mixed | PT::Nullable | PT::Array),
                         P("intSet", PT::Int | PT::Set),
                         P("stringSet", PT::String | PT::Set),
                         P("mixedSet", PT::Mixed | PT::Nullable | PT::Set),
                         L("targetSet", PT::Object | PT::Set, "Target"),
                         P("intMap", PT::Int | PT::Dictionary),
                         P("stringMap", PT::String | PT::Dictionary),
                         P("mixedMap", PT::Mixed | PT::Nullable | PT::Dictionary),
                         L("targetMap", PT::Object | PT::Nullable | PT::Dictionary, "Target"),
                         L("targetList", PT::Object | PT::Array, "Target"),
                         Property("internal_name", PT::String, Property::IsPrimary{false},
                                  Property::IsIndexed{false}, "publicName"),
                         Property("indexedString", PT::String, Property::IsPrimary{false},
                                  Property::IsIndexed{true}),
                     }),
        ObjectSchema("Target",
                     {
                         Property("_id", PT::Int, Property::IsPrimary{true}),
                         P("name", PT::String),
                     },
                     {
                         Property("linkedFrom", PT::LinkingObjects | PT::Array, "AllTypes", "link"),
                     }),
        ObjectSchema("Embedded", ObjectSchema::ObjectType::Embedded,
                     {
                         P("name", PT::String),
                         P("count", PT::Int),
                     }),
        ObjectSchema("StringPK",
                     {
                         Property("_id", PT::String, Property::IsPrimary{true}),
                         P("value", PT::Int),
                     }),
        ObjectSchema("UUIDPK",
                     {
                         Property("_id", PT::UUID, Property::IsPrimary{true}),
                         P("value", PT::String),
                     }),
        ObjectSchema("NoPK",
                     {
                         P("name", PT::String),
                         P("value", PT::Int),
                     }),
    };
}

static void fill_all_types(Realm& realm)
{
    auto& g = realm.read_group();
    auto targets = ObjectStore::table_for_object_type(g, "Target");
    auto all = ObjectStore::table_for_object_type(g, "AllTypes");
    auto c = [&](const char* n) {
        return all->get_column_key(n);
    };

    const char* tnames[] = {"Target 1", "Target two ✓", "", "T4",
                            "Target five, whose name is longer than sixty-four bytes to force a long string"};
    std::vector<Obj> t;
    for (int i = 0; i < 5; ++i)
        t.push_back(targets->create_object_with_primary_key(int64_t(i + 1)).set("name", StringData(tnames[i])));
    auto T = [&](int id) {
        return t[id - 1].get_key();
    };
    auto TL = [&](int id) {
        return ObjLink(targets->get_key(), T(id));
    };

    const int64_t i64max = std::numeric_limits<int64_t>::max();
    const int64_t i64min = std::numeric_limits<int64_t>::min();
    const double dnan = std::numeric_limits<double>::quiet_NaN();
    const double dinf = std::numeric_limits<double>::infinity();
    const float fnan = std::numeric_limits<float>::quiet_NaN();
    const float finf = std::numeric_limits<float>::infinity();

    std::string s15 = rep(15, 'a'), s16 = rep(16, 'a'), s63 = rep(63, 'a'), s64 = rep(64, 'a'),
                s200 = rep(200, 'a');
    std::string big_string = rep(20000, 'a'); // > 16 KiB
    std::string b5 = bytes(5, 1, 1), b300 = bytes(300, 7, 3);
    std::string b3("\x00\xff\x10", 3);
    std::string empty;

    // ---------------- object 0
    {
        Obj o = all->create_object_with_primary_key(oid("65f1a2b3c4d5e6f708091a01"));
        o.set(c("bool"), true);
        o.set(c("int"), int64_t(-42));
        o.set(c("float"), 3.25f);
        o.set(c("double"), -1234.5678);
        o.set(c("string"), StringData("héllo wörld ✓ 日本語 🎉"));
        o.set(c("data"), bin(b5));
        o.set(c("date"), Timestamp(1700000000, 123456789));
        o.set(c("decimal"), dec("123.456"));
        o.set(c("objectId"), oid("5f1e2d3c4b5a69788796a5b4"));
        o.set(c("uuid"), uuid("3b241101-e2bb-4255-8caf-4136c566a962"));
        // mixed = [1, "two", {"k": 3.5}]
        o.set_collection(c("mixed"), CollectionType::List);
        {
            auto l = o.get_list_ptr<Mixed>(c("mixed"));
            l->add(Mixed(int64_t(1)));
            l->add(Mixed("two"));
            l->insert_collection(2, CollectionType::Dictionary);
            l->get_dictionary(2)->insert("k", Mixed(3.5));
        }
        // optionals all null (default)
        o.set(c("link"), T(1));
        {
            auto e = o.create_and_set_linked_object(c("embedded"));
            e.set("name", StringData("emb0"));
            e.set("count", int64_t(10));
            auto el = o.get_linklist(c("embeddedList"));
            auto e1 = el.create_and_insert_linked_object(0);
            e1.set("name", StringData("a"));
            e1.set("count", int64_t(1));
            auto e2 = el.create_and_insert_linked_object(1);
            e2.set("name", StringData("b"));
            e2.set("count", int64_t(2));
        }
        {
            auto l = o.get_list<int64_t>(c("intList"));
            for (int64_t v : {int64_t(1), int64_t(-2), int64_t(3), (int64_t(1) << 32) + 5, i64max, i64min})
                l.add(v);
        }
        {
            auto l = o.get_list<StringData>(c("stringList"));
            for (auto& s : {empty, std::string("a"), s15, s16, s63, s64, s200, std::string("ünïcødé 🎉")})
                l.add(StringData(s));
        }
        {
            auto l = o.get_list<util::Optional<int64_t>>(c("optIntList"));
            l.add(1);
            l.add(util::none);
            l.add(-3);
        }
        {
            auto l = o.get_list<Timestamp>(c("dateList"));
            l.add(Timestamp(0, 0));
            l.add(Timestamp(-1, -1));
            l.add(Timestamp(1700000000, 999999999));
        }
        {
            auto l = o.get_list<Decimal128>(c("decimalList"));
            for (auto s : {"0", "123.456", "-1E-10", "1E+6144", "NaN", "-1234567890123456789012345678901234"})
                l.add(dec(s));
        }
        {
            auto l = o.get_list<UUID>(c("uuidList"));
            l.add(uuid("00000000-0000-0000-0000-000000000000"));
            l.add(uuid("ffffffff-ffff-ffff-ffff-ffffffffffff"));
            l.add(uuid("123e4567-e89b-12d3-a456-426614174000"));
        }
        {
            auto l = o.get_list<ObjectId>(c("objectIdList"));
            l.add(oid("000000000000000000000000"));
            l.add(oid("ffffffffffffffffffffffff"));
        }
        {
            auto l = o.get_list<BinaryData>(c("dataList"));
            l.add(bin(empty));
            l.add(bin(b5));
            l.add(bin(b300));
        }
        {
            auto l = o.get_list<double>(c("doubleList"));
            for (double v : {0.0, -0.0, 1.5, 1e-300, 1e300, 0.1, dnan, dinf, -dinf})
                l.add(v);
        }
        {
            auto l = o.get_list<float>(c("floatList"));
            for (float v : {0.0f, -0.0f, 1.5f, 1e-38f, 3.4e38f, 0.1f, fnan, finf, -finf})
                l.add(v);
        }
        {
            auto l = o.get_list<bool>(c("boolList"));
            l.add(true);
            l.add(false);
            l.add(true);
        }
        {
            auto l = o.get_list<Mixed>(c("mixedList"));
            l.add(Mixed(int64_t(1)));
            l.add(Mixed("s"));
            l.add(Mixed(2.5));
            l.add(Mixed(1.25f));
            l.add(Mixed(true));
            l.add(Mixed(Timestamp(-86400, -5)));
            l.add(Mixed(oid("65f1a2b3c4d5e6f708091aff")));
            l.add(Mixed(uuid("a1b2c3d4-0000-4000-8000-000000000001")));
            l.add(Mixed(dec("-7.5")));
            l.add(Mixed(bin(b3)));
            l.add(Mixed());
            l.add(Mixed(TL(4)));
            l.add(Mixed(int64_t(1) << 40));
        }
        {
            auto s = o.get_set<int64_t>(c("intSet"));
            for (int64_t v : {3, 1, 2, -5})
                s.insert(v);
        }
        {
            auto s = o.get_set<StringData>(c("stringSet"));
            for (auto v : {"b", "a", "ü"})
                s.insert(StringData(v));
        }
        {
            auto s = o.get_set<Mixed>(c("mixedSet"));
            s.insert(Mixed(int64_t(1)));
            s.insert(Mixed("1"));
            s.insert(Mixed(1.5));
            s.insert(Mixed());
            s.insert(Mixed(oid("65f1a2b3c4d5e6f708091aee")));
            s.insert(Mixed(TL(5)));
            s.insert(Mixed(true));
        }
        {
            auto s = o.get_linkset(c("targetSet"));
            s.insert(T(1));
            s.insert(T(2));
            s.insert(T(3));
        }
        {
            auto d = o.get_dictionary(c("intMap"));
            d.insert("one", int64_t(1));
            d.insert("neg", int64_t(-1));
            d.insert("big", int64_t(1) << 40);
        }
        {
            auto d = o.get_dictionary(c("stringMap"));
            d.insert("k", "v");
            d.insert("ünï", "ç");
            d.insert("long", StringData(s200));
        }
        {
            auto d = o.get_dictionary(c("mixedMap"));
            d.insert("int", int64_t(1));
            d.insert("str", "s");
            d.insert("null", Mixed());
            d.insert("link", Mixed(TL(2)));
            d.insert("dec", Mixed(dec("1E-10")));
            d.insert_collection("list", CollectionType::List);
            auto l = d.get_list("list");
            l->add(Mixed(int64_t(1)));
            l->add(Mixed(int64_t(2)));
            d.insert_collection("dict", CollectionType::Dictionary);
            d.get_dictionary("dict")->insert("a", Mixed(int64_t(1)));
        }
        {
            auto d = o.get_dictionary(c("targetMap"));
            d.insert("first", t[0]);
            d.insert("again", t[0]);
            d.insert("none", Mixed());
        }
        {
            auto l = o.get_linklist(c("targetList"));
            l.add(T(1));
            l.add(T(1));
            l.add(T(2));
        }
        o.set(c("internal_name"), StringData("internal-0"));
        o.set(c("indexedString"), StringData("idx-0"));
    }

    // ---------------- object 1
    {
        Obj o = all->create_object_with_primary_key(oid("65f1a2b3c4d5e6f708091a02"));
        o.set(c("bool"), false);
        o.set(c("int"), int64_t(9876543210123));
        o.set(c("float"), 1.17549435e-38f);
        o.set(c("double"), 1e300);
        o.set(c("string"), StringData("")); // empty, not null
        o.set(c("data"), bin(b300));
        o.set(c("date"), Timestamp(-31536000, -250000000)); // 1969-01-01 minus 0.25 s
        o.set(c("decimal"), dec("-1E-10"));
        o.set(c("objectId"), oid("000000000000000000000001"));
        o.set(c("uuid"), uuid("00000000-0000-0000-0000-000000000001"));
        // mixed = {"a": [true, null], "b": "x"}
        o.set_collection(c("mixed"), CollectionType::Dictionary);
        {
            auto d = o.get_dictionary_ptr(c("mixed"));
            d->insert_collection("a", CollectionType::List);
            auto l = d->get_list("a");
            l->add(Mixed(true));
            l->add(Mixed());
            d->insert("b", "x");
        }
        o.set(c("optBool"), true);
        o.set(c("optInt"), int64_t(0));
        o.set(c("optFloat"), 2.5f);
        o.set(c("optDouble"), -0.5);
        o.set(c("optString"), StringData("optional ✓"));
        o.set(c("optData"), bin(b3));
        o.set(c("optDate"), Timestamp(-1, -500000000));
        o.set(c("optDecimal"), dec("0"));
        o.set(c("optObjectId"), oid("0123456789abcdef01234567"));
        o.set(c("optUuid"), uuid("b9d3a4e2-5f6c-4d7e-8f90-a1b2c3d4e5f6"));
        o.set(c("link"), T(2));
        // embedded: null; embeddedList: empty
        o.get_list<int64_t>(c("intList")); // empty
        o.get_list<StringData>(c("stringList")).add("only");
        o.get_list<util::Optional<int64_t>>(c("optIntList")).add(util::none);
        o.get_list<Timestamp>(c("dateList")).add(Timestamp(-62135596800, 0)); // 0001-01-01
        o.get_list<Decimal128>(c("decimalList")).add(dec("3.14159265358979323846264338327950"));
        o.get_list<UUID>(c("uuidList")).add(uuid("00000000-0000-0000-0000-000000000002"));
        o.get_list<ObjectId>(c("objectIdList")).add(oid("65f1a2b3c4d5e6f708091a02"));
        o.get_list<BinaryData>(c("dataList")).add(bin(b5));
        o.get_list<double>(c("doubleList")).add(3.141592653589793);
        o.get_list<float>(c("floatList")).add(2.71828f);
        o.get_list<bool>(c("boolList")).add(false);
        {
            // nested collections inside a Mixed list: [[1, [2]], {"x": {"y": null}}]
            auto l = o.get_list_ptr<Mixed>(c("mixedList"));
            l->insert_collection(0, CollectionType::List);
            auto inner = l->get_list(0);
            inner->add(Mixed(int64_t(1)));
            inner->insert_collection(1, CollectionType::List);
            inner->get_list(1)->add(Mixed(int64_t(2)));
            l->insert_collection(1, CollectionType::Dictionary);
            auto d = l->get_dictionary(1);
            d->insert_collection("x", CollectionType::Dictionary);
            d->get_dictionary("x")->insert("y", Mixed());
        }
        o.get_linkset(c("targetSet")).insert(T(5));
        o.get_dictionary(c("intMap")).insert("zero", int64_t(0));
        o.get_dictionary(c("targetMap")).insert("t5", t[4]);
        o.get_linklist(c("targetList")).add(T(5));
        o.set(c("internal_name"), StringData("internal-1"));
        o.set(c("indexedString"), StringData("idx-1"));
    }

    // ---------------- object 2
    {
        Obj o = all->create_object_with_primary_key(oid("65f1a2b3c4d5e6f708091a03"));
        o.set(c("bool"), true);
        o.set(c("int"), i64min);
        o.set(c("float"), -0.0f);
        o.set(c("double"), 0.1);
        o.set(c("string"), StringData(big_string));
        o.set(c("data"), bin(empty));
        o.set(c("date"), Timestamp(253402300799, 999999999)); // 9999-12-31T23:59:59.999999999
        o.set(c("decimal"), dec("1234567890123456789012345678901234"));
        o.set(c("objectId"), oid("ffffffffffffffffffffffff"));
        o.set(c("uuid"), uuid("ffffffff-ffff-ffff-ffff-ffffffffffff"));
        o.set(c("mixed"), Mixed(TL(3))); // link to Target 3 in Mixed
        o.set(c("optBool"), false);
        o.set(c("optInt"), int64_t(-1));
        // optFloat, optDouble: null
        o.set(c("optString"), StringData("")); // empty, not null
        o.set(c("optData"), bin(empty));       // empty, not null
        // optDate: null
        o.set(c("optDecimal"), dec("-0"));
        // optObjectId: null
        o.set(c("optUuid"), uuid("00000000-0000-0000-0000-000000000000"));
        // link: null
        {
            auto e = o.create_and_set_linked_object(c("embedded"));
            e.set("name", StringData(""));
            e.set("count", int64_t(-3));
            auto e1 = o.get_linklist(c("embeddedList")).create_and_insert_linked_object(0);
            e1.set("name", StringData("ü"));
            e1.set("count", int64_t(3));
        }
        {
            // more than REALM_MAX_BPNODE_SIZE (1000) elements: the list becomes a B+tree with inner nodes
            auto l = o.get_list<int64_t>(c("intList"));
            for (int64_t i = 0; i < 1500; ++i)
                l.add(i * i - 700);
        }
        {
            auto s = o.get_set<int64_t>(c("intSet"));
            s.insert(int64_t(1) << 40);
        }
        o.get_set<Mixed>(c("mixedSet")).insert(Mixed(dec("2.5")));
        o.get_dictionary(c("stringMap")).insert("only", "value");
        o.get_dictionary(c("mixedMap")).insert("t1", Mixed(TL(1)));
        o.set(c("internal_name"), StringData("internal-2"));
        o.set(c("indexedString"), StringData("idx-2"));
    }

    {
        auto sp = ObjectStore::table_for_object_type(g, "StringPK");
        sp->create_object_with_primary_key("alpha").set("value", int64_t(1));
        sp->create_object_with_primary_key("βeta").set("value", int64_t(2));
        auto up = ObjectStore::table_for_object_type(g, "UUIDPK");
        up->create_object_with_primary_key(uuid("11111111-2222-4333-8444-555555555555")).set("value", StringData("u1"));
        up->create_object_with_primary_key(uuid("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee")).set("value", StringData("u2"));
        auto np = ObjectStore::table_for_object_type(g, "NoPK");
        np->create_object().set("name", StringData("first")).set("value", int64_t(1));
        np->create_object().set("name", StringData("second")).set("value", int64_t(2));
    }
}

static std::vector<char> the_key()
{
    std::vector<char> k(64);
    for (int i = 0; i < 64; ++i)
        k[i] = char(i);
    return k;
}

static void write_all_types(const fs::path& file, const std::vector<char>& key)
{
    fs::remove(file);
    RealmConfig config;
    config.path = file.string();
    config.schema = all_types_schema();
    config.schema_version = 7;
    config.encryption_key = key;
    auto realm = Realm::get_shared_realm(config);
    realm->begin_transaction();
    fill_all_types(*realm);
    realm->commit_transaction();
    realm->close();
}

// ---------------------------------------------------------------- tasks

static Schema tasks_schema()
{
    return Schema{ObjectSchema("Task", {
                                           Property("_id", PT::ObjectId, Property::IsPrimary{true}),
                                           Property("title", PT::String),
                                           Property("done", PT::Bool),
                                           Property("priority", PT::Int),
                                           Property("created", PT::Date),
                                       })};
}

static ObjectId task_id(int64_t n)
{
    // 4-byte big-endian (1700000000 + n), 4 zero bytes, 4-byte big-endian n
    ObjectId::ObjectIdBytes b{};
    uint32_t t = uint32_t(1700000000 + n);
    for (int i = 0; i < 4; ++i) {
        b[i] = uint8_t(t >> (24 - 8 * i));
        b[8 + i] = uint8_t(uint32_t(n) >> (24 - 8 * i));
    }
    return ObjectId(b);
}

static void write_tasks(const fs::path& file)
{
    fs::remove(file);
    RealmConfig config;
    config.path = file.string();
    config.schema = tasks_schema();
    config.schema_version = 1;
    auto realm = Realm::get_shared_realm(config);
    realm->begin_transaction();
    auto t = ObjectStore::table_for_object_type(realm->read_group(), "Task");
    auto title = t->get_column_key("title"), done = t->get_column_key("done"),
         prio = t->get_column_key("priority"), created = t->get_column_key("created");
    for (int64_t n = 0; n < 100000; ++n) {
        t->create_object_with_primary_key(task_id(n))
            .set(title, StringData("Task #" + std::to_string(n)))
            .set(done, n % 3 == 0)
            .set(prio, n % 5)
            .set(created, Timestamp(1700000000 + n, 0));
    }
    realm->commit_transaction();
    realm->close();
}

// ---------------------------------------------------------------- empty schema v3

static Schema person_schema()
{
    return Schema{ObjectSchema("Person", {Property("name", PT::String), Property("age", PT::Int)})};
}

static void write_person(const fs::path& file)
{
    fs::remove(file);
    RealmConfig config;
    config.path = file.string();
    config.schema = person_schema();
    config.schema_version = 3;
    auto realm = Realm::get_shared_realm(config);
    realm->close();
}

// ---------------------------------------------------------------- tasks_w1 (mode --tasks-w1)

static Schema tasks_w1_schema()
{
    return Schema{ObjectSchema("Task", {
                                           Property("_id", PT::ObjectId, Property::IsPrimary{true}),
                                           Property("name", PT::String),
                                           Property("owner", PT::String, Property::IsPrimary{false},
                                                    Property::IsIndexed{true}),
                                           Property("done", PT::Bool),
                                           Property("priority", PT::Int),
                                       })};
}

static ObjectId task_w1_id(int64_t n)
{
    // 0x65, 3 zero bytes, then n as 8-byte big-endian
    ObjectId::ObjectIdBytes b{};
    b[0] = 0x65;
    for (int i = 0; i < 8; ++i)
        b[4 + i] = uint8_t(uint64_t(n) >> (56 - 8 * i));
    return ObjectId(b);
}

struct SplitMix64 {
    uint64_t state;
    uint64_t next()
    {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

static void write_tasks_w1(const fs::path& file)
{
    for (auto& f : {file, fs::path(file.string() + ".compact")})
        fs::remove(f);
    RealmConfig config;
    config.path = file.string();
    config.schema = tasks_w1_schema();
    config.schema_version = 1;
    auto realm = Realm::get_shared_realm(config);
    realm->begin_transaction();
    auto t = ObjectStore::table_for_object_type(realm->read_group(), "Task");
    auto name = t->get_column_key("name"), owner = t->get_column_key("owner"), done = t->get_column_key("done"),
         prio = t->get_column_key("priority");
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz "; // 27 characters
    SplitMix64 rng{42};
    std::string nm(20, ' ');
    for (int64_t n = 0; n < 100000; ++n) {
        for (auto& ch : nm)
            ch = alphabet[rng.next() % 27];
        std::string ow = "owner-" + std::to_string(rng.next() % 100);
        bool d = rng.next() % 2 == 0;
        int64_t p = int64_t(rng.next() % 10);
        t->create_object_with_primary_key(task_w1_id(n))
            .set(name, StringData(nm))
            .set(owner, StringData(ow))
            .set(done, d)
            .set(prio, p);
    }
    realm->commit_transaction();
    if (!realm->compact())
        throw std::runtime_error("compact failed");
    realm->close();
}

static int tasks_w1_main(const fs::path& out)
{
    fs::create_directories(out);
    auto f = out / "tasks_w1_100k.realm";
    write_tasks_w1(f);
    remove_aux(f);
    {
        RealmConfig config;
        config.path = f.string();
        config.schema_mode = SchemaMode::Immutable;
        auto realm = Realm::get_shared_realm(config);
        auto& g = realm->read_group();
        std::cout << "schemaVersion " << ObjectStore::get_schema_version(g) << "\n";
        auto t = ObjectStore::table_for_object_type(g, "Task");
        std::cout << "Task objects " << t->size() << "\n";
        for (int64_t n : {0, 1, 99999}) {
            auto o = t->get_object(t->find_primary_key(Mixed(task_w1_id(n))));
            std::cout << "n=" << n << " _id=" << o.get<ObjectId>("_id").to_string() << " name=\""
                      << o.get<StringData>("name") << "\" owner=\"" << o.get<StringData>("owner")
                      << "\" done=" << (o.get<bool>("done") ? "true" : "false")
                      << " priority=" << o.get<int64_t>("priority") << "\n";
        }
    }
    remove_aux(f);
    return 0;
}

// ---------------------------------------------------------------- synced_tasks (mode --synced-tasks)

static Schema synced_tasks_schema()
{
    return Schema{ObjectSchema("SyncedTask", {
                                                 Property("_id", PT::ObjectId, Property::IsPrimary{true}),
                                                 Property("name", PT::String),
                                                 Property("owner", PT::String),
                                                 Property("done", PT::Bool),
                                             })};
}

static ObjectId synced_task_id(int64_t n)
{
    // 0x66, 3 zero bytes, then n as 8-byte big-endian
    ObjectId::ObjectIdBytes b{};
    b[0] = 0x66;
    for (int i = 0; i < 8; ++i)
        b[4 + i] = uint8_t(uint64_t(n) >> (56 - 8 * i));
    return ObjectId(b);
}

static void write_synced_tasks(const fs::path& file)
{
    for (auto& f : {file, fs::path(file.string() + ".compact")})
        fs::remove(f);
    RealmConfig config;
    config.path = file.string();
    config.schema = synced_tasks_schema();
    config.schema_version = 0;
    auto realm = Realm::get_shared_realm(config);
    realm->begin_transaction();
    auto t = ObjectStore::table_for_object_type(realm->read_group(), "SyncedTask");
    auto name = t->get_column_key("name"), owner = t->get_column_key("owner"), done = t->get_column_key("done");
    for (int64_t n = 0; n < 50; ++n) {
        std::string nm = "realm task " + std::to_string(n);
        t->create_object_with_primary_key(synced_task_id(n))
            .set(name, StringData(nm))
            .set(owner, StringData(n % 2 == 0 ? "Frodo" : "Sam"))
            .set(done, n % 3 == 0);
    }
    realm->commit_transaction();
    if (!realm->compact())
        throw std::runtime_error("compact failed");
    realm->close();
}

static int synced_tasks_main(const fs::path& out)
{
    fs::create_directories(out);
    auto f = out / "synced_tasks_v0.realm";
    write_synced_tasks(f);
    remove_aux(f);
    int rc = 0;
    {
        RealmConfig config;
        config.path = f.string();
        config.schema_mode = SchemaMode::Immutable;
        auto realm = Realm::get_shared_realm(config);
        auto& g = realm->read_group();
        auto sv = ObjectStore::get_schema_version(g);
        std::cout << "schemaVersion " << sv << "\n";
        auto t = ObjectStore::table_for_object_type(g, "SyncedTask");
        std::cout << "SyncedTask objects " << t->size() << "\n";
        if (sv != 0 || t->size() != 50)
            rc = 1;
        for (int64_t n = 0; n < 50; ++n) {
            auto k = t->find_primary_key(Mixed(synced_task_id(n)));
            if (!k) {
                rc = 1;
                continue;
            }
            auto o = t->get_object(k);
            bool ok = o.get<StringData>("name") == StringData("realm task " + std::to_string(n)) &&
                      o.get<StringData>("owner") == StringData(n % 2 == 0 ? "Frodo" : "Sam") &&
                      o.get<bool>("done") == (n % 3 == 0);
            if (!ok)
                rc = 1;
            if (n == 0 || n == 1 || n == 49)
                std::cout << "n=" << n << " _id=" << o.get<ObjectId>("_id").to_string() << " name=\""
                          << o.get<StringData>("name") << "\" owner=\"" << o.get<StringData>("owner")
                          << "\" done=" << (o.get<bool>("done") ? "true" : "false") << "\n";
        }
        std::cout << (rc == 0 ? "verify OK" : "verify FAILED") << "\n";
    }
    remove_aux(f);
    return rc;
}

int main(int argc, char** argv)
{
    // Linux has no built-in run-loop scheduler in realm-core; the generic one suffices (no notifications used).
    util::Scheduler::set_default_factory(util::Scheduler::make_generic);
    if (argc > 1 && std::string(argv[1]) == "--tasks-w1")
        return tasks_w1_main(argc > 2 ? argv[2] : "/work/realm-fixtures-out");
    if (argc > 1 && std::string(argv[1]) == "--synced-tasks")
        return synced_tasks_main(argc > 2 ? argv[2] : "/work/realm-fixtures-out");
    fs::path out = argc > 1 ? argv[1] : "/work/realm-fixtures-out";
    fs::create_directories(out);
    auto key = the_key();

    auto f1 = out / "allTypes_v24.realm";
    auto f2 = out / "allTypes_v24_encrypted.realm";
    auto f3 = out / "tasks_100k.realm";
    auto f4 = out / "empty_schema_v3.realm";

    write_all_types(f1, {});
    write_all_types(f2, key);
    write_tasks(f3);
    write_person(f4);
    for (auto& f : {f1, f2, f3, f4})
        remove_aux(f);

    dump_file(f1, all_types_schema(), {}, out / "expected_allTypes_v24.json");
    dump_file(f2, all_types_schema(), key, out / "expected_allTypes_v24_encrypted.json");
    std::vector<std::string> samples;
    {
        // explicit samples by primary key
        RealmConfig config;
        config.path = f3.string();
        config.schema_mode = SchemaMode::Immutable;
        auto realm = Realm::get_shared_realm(config);
        auto& g = realm->read_group();
        auto schema = tasks_schema();
        Dumper d{g, schema};
        auto t = ObjectStore::table_for_object_type(g, "Task");
        for (int64_t n : {0, 1, 2, 3, 4, 5, 12345, 50000, 99998, 99999}) {
            auto k = t->find_primary_key(Mixed(task_id(n)));
            samples.push_back(jobj({{"n", std::to_string(n)}, {"object", d.object(t->get_object(k), 6)}}, 4));
        }
    }
    dump_file(f3, tasks_schema(), {}, out / "expected_tasks_100k.json", 20,
              {{"rule",
                jstr("For n in 0..<100000 there is one Task with _id = ObjectId whose 12 bytes are "
                     "big-endian UInt32(1700000000+n), 4 zero bytes, big-endian UInt32(n); "
                     "title = \"Task #<n>\"; done = (n % 3 == 0); priority = n % 5; created = "
                     "Timestamp(seconds: 1700000000+n, nanoseconds: 0). Only the first 20 objects in "
                     "iteration order are listed under classes.Task.objects; samplesByPk lists chosen n.")},
               {"samplesByPk", jarr(samples, 2)}});
    dump_file(f4, person_schema(), {}, out / "expected_empty_schema_v3.json");
    for (auto& f : {f1, f2, f3, f4})
        remove_aux(f);
    std::cout << "done\n";
}
