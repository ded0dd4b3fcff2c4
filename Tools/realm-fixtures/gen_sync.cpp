// Synced-realm fixture generator (needs a realm-core build with REALM_ENABLE_SYNC=ON).
//
// Writes Realm files the way a Realm Swift app's device holds them for a synced Realm:
// the file is opened through the object store with a real SyncConfig (partition-based
// or flexible sync), so realm-core's RealmCoordinator opens the DB with the sync
// ClientReplication (sync client history), creates a SyncSession through a SyncManager,
// and applies the schema in AdditiveDiscovered mode with sync schema validation.
// No server exists: the sync route points at ws://127.0.0.1:1 (connection refused), so
// every local commit stays in the client history, never uploaded, and the file never
// receives a client file ident from a server.
//
// Usage: gen_sync [<outdir>]        writes synced_partition_v24.realm and synced_flexible_v24.realm
//        gen_sync --dump <file>     prints tables, history slot info and the local changesets

#include <realm/object-store/shared_realm.hpp>
#include <realm/object-store/schema.hpp>
#include <realm/object-store/object_schema.hpp>
#include <realm/object-store/property.hpp>
#include <realm/object-store/object_store.hpp>
#include <realm/object-store/util/scheduler.hpp>
#include <realm/object-store/sync/sync_manager.hpp>
#include <realm/object-store/sync/sync_session.hpp>
#include <realm/object-store/sync/sync_user.hpp>
#include <realm/object-store/sync/app_config.hpp>
#include <realm/sync/config.hpp>
#include <realm/sync/subscriptions.hpp>
#include <realm/sync/noinst/client_history_impl.hpp>
#include <realm/sync/changeset_parser.hpp>
#include <realm/util/input_stream.hpp>
#include <realm/db.hpp>
#include <realm/group.hpp>
#include <realm/table.hpp>
#include <realm/obj.hpp>
#include <realm/list.hpp>
#include <realm/util/compression.hpp>
#include <realm/chunked_binary.hpp>
#include <realm/sync/instructions.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

using namespace realm;
namespace fs = std::filesystem;
using PT = PropertyType;

// A minimal SyncUser standing in for a logged-in app user (no App services involved).
class FixtureUser : public SyncUser {
public:
    FixtureUser(std::shared_ptr<SyncManager> mgr)
        : m_mgr(std::move(mgr))
    {
    }
    std::string user_id() const noexcept override
    {
        return "fixture-user";
    }
    std::string app_id() const noexcept override
    {
        return "fixture-app";
    }
    std::string access_token() const override
    {
        return "fixture-access-token";
    }
    std::string refresh_token() const override
    {
        return "fixture-refresh-token";
    }
    State state() const override
    {
        return m_state.load();
    }
    bool access_token_refresh_required() const override
    {
        return false;
    }
    SyncManager* sync_manager() override
    {
        return m_mgr.get();
    }
    void request_log_out() override {}
    void request_refresh_location(CompletionHandler&& h) override
    {
        h(std::nullopt);
    }
    void request_access_token(CompletionHandler&& h) override
    {
        h(std::nullopt);
    }
    void track_realm(std::string_view) override {}
    std::string create_file_action(SyncFileAction, std::string_view, std::optional<std::string>) override
    {
        return {};
    }
    std::atomic<State> m_state{State::LoggedOut};

private:
    std::shared_ptr<SyncManager> m_mgr;
};

static Schema synced_task_schema()
{
    return Schema{ObjectSchema("SyncedTask", {
                                                 Property("_id", PT::ObjectId, Property::IsPrimary{true}),
                                                 Property("name", PT::String),
                                                 Property("owner", PT::String),
                                                 Property("done", PT::Bool),
                                             })};
}

static ObjectId task_id(int64_t n)
{
    // 0x67, 3 zero bytes, then n as 8-byte big-endian
    ObjectId::ObjectIdBytes b{};
    b[0] = 0x67;
    for (int i = 0; i < 8; ++i)
        b[4 + i] = uint8_t(uint64_t(n) >> (56 - 8 * i));
    return ObjectId(b);
}

static void remove_aux(const fs::path& file)
{
    fs::remove(file.string() + ".lock");
    fs::remove(file.string() + ".note");
    fs::remove_all(file.string() + ".management");
    fs::remove(file.string() + ".fresh.lock");
}

struct Env {
    std::shared_ptr<SyncManager> mgr;
    std::shared_ptr<FixtureUser> user;
    Env()
    {
        SyncClientConfig cc;
        cc.log_level = util::Logger::Level::warn;
        cc.reconnect_mode = ReconnectMode::normal;
        mgr = SyncManager::create(cc);
        // ws, loopback, port 1: every connection attempt is refused; nothing is ever uploaded.
        mgr->set_sync_route("ws://127.0.0.1:1/api/client/v2.0/app/fixture-app/realm-sync", true);
        user = std::make_shared<FixtureUser>(mgr);
    }
    ~Env()
    {
        mgr->close_all_sessions();
        mgr->wait_for_sessions_to_terminate();
        mgr->tear_down_for_testing();
    }
};

static RealmConfig make_config(Env& env, const fs::path& file, bool flx)
{
    RealmConfig config;
    config.path = file.string();
    config.schema = synced_task_schema();
    config.schema_version = 0;
    // Realm Swift sets AdditiveDiscovered for every synced configuration.
    config.schema_mode = SchemaMode::AdditiveDiscovered;
    if (flx)
        config.sync_config = std::make_shared<SyncConfig>(env.user, SyncConfig::FLXSyncEnabled{});
    else
        // Realm Swift passes the partition as BSON; a string partition "tasks".
        config.sync_config = std::make_shared<SyncConfig>(env.user, bson::Bson(std::string("tasks")));
    config.sync_config->stop_policy = SyncSessionStopPolicy::Immediately;
    config.sync_config->client_resync_mode = ClientResyncMode::Recover;
    return config;
}

// The user becomes logged in after the schema is in place, then the session is revived. This keeps
// the order of the sync client's own commits (flx pending-bootstrap store) deterministic.
static void start_session(Env& env, SharedRealm& realm, bool flx)
{
    env.user->m_state = SyncUser::State::LoggedIn;
    auto session = realm->sync_session();
    if (!session)
        throw std::runtime_error("no sync session");
    session->revive_if_needed();
    if (flx) {
        // wait for SessionWrapper::actualize() to create the flx_pending_bootstrap tables
        for (int i = 0; i < 200; ++i) {
            realm->refresh();
            if (realm->read_group().has_table("flx_pending_bootstrap"))
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (!realm->read_group().has_table("flx_pending_bootstrap"))
            throw std::runtime_error("session did not actualize");
    }
    else {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::cout << "  session state " << int(session->state()) << " connection " << int(session->connection_state())
              << "\n";
}

static void set_task(Obj o, TableRef t, int64_t n)
{
    std::string nm = "synced task " + std::to_string(n);
    o.set(t->get_column_key("name"), StringData(nm))
        .set(t->get_column_key("owner"), StringData(n % 2 == 0 ? "Frodo" : "Sam"))
        .set(t->get_column_key("done"), n % 4 == 0);
}

static void write_partition(Env& env, const fs::path& file)
{
    auto config = make_config(env, file, false);
    auto realm = Realm::get_shared_realm(config);
    start_session(env, realm, false);
    auto table = [&] {
        return ObjectStore::table_for_object_type(realm->read_group(), "SyncedTask");
    };
    // Commits 1-4: 5 objects each, n = 0..19. Two objects are first written with other values
    // (n = 7 name "synced task 7 (draft)", n = 12 done = false); commit 4 also creates an extra
    // object n = 20 that commit 5 deletes.
    for (int c = 0; c < 4; ++c) {
        realm->begin_transaction();
        auto t = table();
        for (int64_t n = c * 5; n < c * 5 + 5; ++n) {
            auto o = t->create_object_with_primary_key(task_id(n));
            set_task(o, t, n);
            if (n == 7)
                o.set(t->get_column_key("name"), StringData("synced task 7 (draft)"));
            if (n == 12)
                o.set(t->get_column_key("done"), false);
        }
        if (c == 3)
            set_task(t->create_object_with_primary_key(task_id(20)), t, 20);
        realm->commit_transaction();
    }
    // Commit 5: modify 2 objects, delete 1.
    realm->begin_transaction();
    {
        auto t = table();
        t->get_object_with_primary_key(task_id(7)).set(t->get_column_key("name"), StringData("synced task 7"));
        t->get_object_with_primary_key(task_id(12)).set(t->get_column_key("done"), true);
        t->get_object_with_primary_key(task_id(20)).remove();
    }
    realm->commit_transaction();
    realm->close();
}

static void write_flexible(Env& env, const fs::path& file)
{
    auto config = make_config(env, file, true);
    auto realm = Realm::get_shared_realm(config);
    start_session(env, realm, true);
    // Subscription set version 1: "frodo" (owner == "Frodo") and an unnamed one (done == true).
    {
        realm->refresh();
        auto t = ObjectStore::table_for_object_type(realm->read_group(), "SyncedTask");
        Query q_frodo = t->where().equal(t->get_column_key("owner"), StringData("Frodo"));
        Query q_done = t->where().equal(t->get_column_key("done"), true);
        auto mut = realm->get_latest_subscription_set().make_mutable_copy();
        mut.insert_or_assign("frodo", q_frodo);
        mut.insert_or_assign(q_done);
        auto committed = mut.commit();
        std::cout << "  subscription set version " << committed.version() << " state "
                  << int(committed.state()) << " size " << committed.size() << "\n";
    }
    // Two commits of 5 objects: n = 100..104, 105..109.
    for (int c = 0; c < 2; ++c) {
        realm->begin_transaction();
        auto t = ObjectStore::table_for_object_type(realm->read_group(), "SyncedTask");
        for (int64_t n = 100 + c * 5; n < 105 + c * 5; ++n)
            set_task(t->create_object_with_primary_key(task_id(n)), t, n);
        realm->commit_transaction();
    }
    realm->close();
}

// ---------------------------------------------------------------- dump / verify

static int verify_objects(Group& g, int64_t from, int64_t to)
{
    auto t = ObjectStore::table_for_object_type(g, "SyncedTask");
    int rc = 0;
    if (!t || int64_t(t->size()) != to - from) {
        std::cout << "  wrong object count\n";
        return 1;
    }
    for (int64_t n = from; n < to; ++n) {
        auto k = t->find_primary_key(Mixed(task_id(n)));
        if (!k) {
            rc = 1;
            continue;
        }
        auto o = t->get_object(k);
        bool ok = o.get<StringData>("name") == StringData("synced task " + std::to_string(n)) &&
                  o.get<StringData>("owner") == StringData(n % 2 == 0 ? "Frodo" : "Sam") &&
                  o.get<bool>("done") == (n % 4 == 0);
        if (!ok) {
            std::cout << "  mismatch n=" << n << "\n";
            rc = 1;
        }
    }
    std::cout << "  objects " << t->size() << (rc ? " verify FAILED" : " verify OK") << "\n";
    return rc;
}

static int dump(const fs::path& orig)
{
    // Work on a copy so the fixture is never touched.
    fs::path file = fs::temp_directory_path() / ("gen_sync_dump_" + orig.filename().string());
    fs::remove(file);
    remove_aux(file);
    fs::copy_file(orig, file);
    int rc = 0;
    {
        auto hist = sync::make_client_replication();
        auto& h = hist->get_history();
        DBOptions opt;
        opt.no_create = true;
        auto db = DB::create(std::move(hist), file.string(), opt);
        auto tr = db->start_read();
        std::cout << orig.filename().string() << ": db version " << tr->get_version() << "\n";
        for (auto tk : tr->get_table_keys()) {
            auto t = tr->get_table(tk);
            std::cout << "  [" << tk.value << "] " << t->get_name() << " type=" << int(t->get_table_type()) << " rows=" << t->size()
                      << " cols:";
            for (auto c : t->get_column_keys())
                std::cout << " " << t->get_column_name(c) << "(" << int(c.get_type()) << (c.is_list() ? ",list" : "")
                          << (c.is_nullable() ? ",null" : "") << (t->has_search_index(c) ? ",idx" : "") << ")";
            std::cout << "\n";
        }
        std::cout << "  history schema version " << tr->get_history_schema_version() << ", sync file id "
                  << tr->get_sync_file_id() << "\n";
        sync::version_type cur;
        sync::SaltedFileIdent ident;
        sync::SyncProgress progress;
        h.get_status(cur, ident, progress);
        std::cout << "  history status: current client version " << cur << ", client file ident " << ident.ident
                  << " salt " << ident.salt << ", upload progress client " << progress.upload.client_version
                  << " server " << progress.upload.last_integrated_server_version << ", download server "
                  << progress.download.server_version << "\n";
        auto wt = db->start_write();
        auto changes = h.get_local_changes(wt->get_version());
        std::cout << "  local (not uploaded) changesets: " << changes.size() << "\n";
        for (auto& c : changes) {
            sync::Changeset cs;
            ChunkedBinaryInputStream in{c.changeset};
            if (getenv("HEXDUMP")) {
                util::AppendBuffer<char> ab;
                c.changeset.copy_to(ab);
                for (size_t i = 0; i < ab.size(); ++i)
                    fprintf(stderr, "%02x%s", (unsigned char)ab.data()[i], (i % 32 == 31) ? "\n" : " ");
                fprintf(stderr, "\n");
            }
            // Changesets are stored in the history compressed with core's "nonportable" framing.
            size_t decompressed_size = 0;
            auto dec = util::compression::decompress_nonportable_input_stream(in, decompressed_size);
            if (!dec)
                throw std::runtime_error("cannot decompress changeset");
            sync::parse_changeset(*dec, cs);
            // instruction types, run-length grouped
            std::vector<std::pair<std::string, int>> runs;
            for (auto in : cs) {
                if (!in)
                    continue;
                std::string tn = sync::get_type_name(in->type());
                if (!runs.empty() && runs.back().first == tn)
                    ++runs.back().second;
                else
                    runs.push_back({tn, 1});
            }
            std::cout << "    version " << c.version << ": " << c.changeset.size() << " bytes stored ("
                      << decompressed_size << " uncompressed), " << cs.size()
                      << " instructions:";
            for (auto& r : runs)
                std::cout << " " << r.first << (r.second > 1 ? "x" + std::to_string(r.second) : "");
            std::cout << "\n";
        }
        wt->rollback();
        if (auto subsets = tr->get_table("flx_subscription_sets")) {
            auto st = tr->get_table("flx_subscriptions");
            for (auto& o : *subsets) {
                std::cout << "  subscription set " << o.get_primary_key() << " state "
                          << o.get<int64_t>("state") << " snapshot_version " << o.get<int64_t>("snapshot_version")
                          << "\n";
                auto lst = o.get_linklist("subscriptions");
                for (size_t i = 0; i < lst.size(); ++i) {
                    auto s = lst.get_object(i);
                    auto name = s.get<StringData>("name");
                    std::cout << "    sub name=" << (name.is_null() ? "<null>" : "\"" + std::string(name) + "\"")
                              << " class=" << s.get<StringData>("object_class") << " query=\""
                              << s.get<StringData>("query") << "\" id=" << s.get<ObjectId>("id")
                              << " created_at=" << s.get<Timestamp>("created_at") << " updated_at=" << s.get<Timestamp>("updated_at") << "\n";
                }
            }
        }
        if (orig.filename().string().find("partition") != std::string::npos)
            rc |= verify_objects(*tr, 0, 20);
        else
            rc |= verify_objects(*tr, 100, 110);
    }
    remove_aux(file);
    fs::remove(file);
    return rc;
}

int main(int argc, char** argv)
{
    util::Scheduler::set_default_factory(util::Scheduler::make_generic);
    if (argc > 2 && std::string(argv[1]) == "--dump")
        return dump(argv[2]);
    fs::path out = argc > 1 ? argv[1] : "/work/realm-fixtures-out";
    fs::create_directories(out);
    auto f1 = out / "synced_partition_v24.realm";
    auto f2 = out / "synced_flexible_v24.realm";
    for (auto& f : {f1, f2}) {
        fs::remove(f);
        remove_aux(f);
    }
    // One SyncManager and one (initially logged-out) user per file.
    {
        Env env;
        std::cout << "partition-based\n";
        write_partition(env, f1);
    }
    {
        Env env;
        std::cout << "flexible\n";
        write_flexible(env, f2);
    }
    for (auto& f : {f1, f2})
        remove_aux(f);
    int rc = dump(f1) | dump(f2);
    return rc;
}
