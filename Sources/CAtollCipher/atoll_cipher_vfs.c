/*
 * The encrypting VFS shim (see atoll_cipher.h and docs/storage.md).
 *
 * Every file of an encrypted database keeps SQLite's view ("logical" offsets) apart from what is
 * on disk ("physical" offsets): a 64-byte file header, then each unit of plaintext sealed with its
 * nonce and tag behind it. A unit is one database page in the main file, one page-sized chunk in
 * a rollback journal, and in the write-ahead log the 32-byte log header (kept in plaintext: it
 * holds only the format, page size, salts and a checksum of those), then for each frame its
 * 24-byte frame header and its page as two units. Units are sealed whole, each with fresh
 * random bytes (a nonce, or from format version 2 a salt for a key of the write's own), so one
 * write of a page is one write on disk; a write of part of a unit (SQLite
 * does not make them, but the shim accepts them) reads, patches and seals the unit again.
 *
 * SQLite never sees ciphertext, so nothing above this layer changes: page size, backups between
 * encrypted and plaintext files, VACUUM and checkpoints work as they do without encryption.
 * Memory-mapped reads are turned off for these files (I/O methods version 2: no xFetch).
 */
#include "atoll_cipher.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#define HEADER ATOLL_CIPHER_HEADER_SIZE
#define PAGE ATOLL_CIPHER_PAGE_SIZE
#define WAL_HEADER 32
#define FRAME_HEADER 24
#define MAX_UNIT_PHYSICAL (PAGE + ATOLL_CIPHER_MAX_OVERHEAD)
#define FRAME_LOGICAL (FRAME_HEADER + PAGE)

static const char magic[8] = {'A', 'T', 'O', 'L', 'L', 'E', 'N', 'C'};
static const char sqlite_magic[16] = "SQLite format 3";

static atoll_cipher_callbacks callbacks;
static sqlite3_vfs cipher_vfs;
static sqlite3_vfs *base_vfs;

/* A key bound to one database, shared by its main file and the log and journal beside it. */
typedef struct cipher_ref {
    atomic_int refs;
    void *cipher;
    unsigned char header[HEADER];
    /* Bytes each sealed unit takes beyond its plaintext (the header's format version says). */
    int overhead;
} cipher_ref;

/* The overhead of units under `header`'s format version (bytes 8-9, big-endian); 0 for none known. */
static int header_overhead(const unsigned char *header) {
    switch ((header[8] << 8) | header[9]) {
    case 1: return ATOLL_CIPHER_OVERHEAD_V1;
    case 2: return ATOLL_CIPHER_OVERHEAD_V2;
    default: return 0;
    }
}

static cipher_ref *cipher_retain(cipher_ref *ref) {
    atomic_fetch_add(&ref->refs, 1);
    return ref;
}

static void cipher_release(cipher_ref *ref) {
    if (ref && atomic_fetch_sub(&ref->refs, 1) == 1) {
        callbacks.release(ref->cipher);
        free(ref);
    }
}

enum file_kind { KIND_MAIN, KIND_WAL, KIND_JOURNAL };

typedef struct cipher_file {
    sqlite3_file base;
    sqlite3_file *real;
    int kind;
    int read_only;
    /* Main files: the name SQLite opened them with (the same pointer it derives the log's and
     * journal's names from) and the next main file in the registry. */
    const char *db_name;
    struct cipher_file *next;
    cipher_ref *cipher;
} cipher_file;

/* Open main files, so a log or journal opened later finds its database's key. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cipher_file *registry;

static cipher_ref *registry_cipher(const char *db_name) {
    cipher_ref *found = NULL;
    pthread_mutex_lock(&registry_lock);
    for (cipher_file *f = registry; f; f = f->next) {
        if (f->db_name == db_name && f->cipher) {
            found = cipher_retain(f->cipher);
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return found;
}

static void wipe(void *p, size_t n) {
    volatile unsigned char *v = p;
    while (n--) *v++ = 0;
}

/* MARK: Layout */

/* The file's unit overhead (a file not keyed yet has no units to place). */
static sqlite3_int64 overhead_of(const cipher_file *f) {
    return f->cipher ? f->cipher->overhead : ATOLL_CIPHER_OVERHEAD_V1;
}

static sqlite3_int64 unit_physical(const cipher_file *f) { return PAGE + overhead_of(f); }

static sqlite3_int64 frame_physical(const cipher_file *f) { return FRAME_HEADER + PAGE + 2 * overhead_of(f); }

typedef struct unit {
    uint8_t tag;           /* 0: stored as is; else the kind sealed into the unit */
    uint64_t index;
    sqlite3_int64 logical; /* where the unit starts for SQLite */
    int length;            /* its plaintext length */
    sqlite3_int64 physical;
} unit;

static unit unit_at(const cipher_file *f, sqlite3_int64 offset) {
    unit u;
    if (f->kind == KIND_WAL) {
        if (offset < WAL_HEADER) {
            u.tag = 0; u.index = 0; u.logical = 0; u.length = WAL_HEADER; u.physical = HEADER;
            return u;
        }
        sqlite3_int64 frame = (offset - WAL_HEADER) / FRAME_LOGICAL;
        sqlite3_int64 within = (offset - WAL_HEADER) % FRAME_LOGICAL;
        u.index = (uint64_t)frame;
        u.logical = WAL_HEADER + frame * FRAME_LOGICAL;
        u.physical = HEADER + WAL_HEADER + frame * frame_physical(f);
        if (within < FRAME_HEADER) {
            u.tag = 'H'; u.length = FRAME_HEADER;
        } else {
            u.tag = 'F'; u.length = PAGE;
            u.logical += FRAME_HEADER;
            u.physical += FRAME_HEADER + overhead_of(f);
        }
        return u;
    }
    sqlite3_int64 index = offset / PAGE;
    u.tag = f->kind == KIND_MAIN ? 'D' : 'J';
    u.index = (uint64_t)index;
    u.logical = index * PAGE;
    u.length = PAGE;
    u.physical = HEADER + index * unit_physical(f);
    return u;
}

/* The physical size that holds `size` logical bytes (a unit cut short counts whole). */
static sqlite3_int64 physical_size(const cipher_file *f, sqlite3_int64 size) {
    if (size <= 0) return HEADER;
    unit u = unit_at(f, size - 1);
    return u.physical + u.length + (u.tag ? overhead_of(f) : 0);
}

/* The logical size of what is on disk: whole units only. */
static sqlite3_int64 logical_size(const cipher_file *f, sqlite3_int64 physical) {
    if (physical <= HEADER) return 0;
    sqlite3_int64 p = physical - HEADER;
    if (f->kind != KIND_WAL) return (p / unit_physical(f)) * PAGE;
    if (p < WAL_HEADER) return p;
    p -= WAL_HEADER;
    sqlite3_int64 frames = p / frame_physical(f), rest = p % frame_physical(f);
    return WAL_HEADER + frames * FRAME_LOGICAL + (rest >= FRAME_HEADER + overhead_of(f) ? FRAME_HEADER : 0);
}

/* MARK: I/O methods */

static int cipher_close(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    if (f->kind == KIND_MAIN) {
        pthread_mutex_lock(&registry_lock);
        for (cipher_file **p = &registry; *p; p = &(*p)->next) {
            if (*p == f) { *p = f->next; break; }
        }
        pthread_mutex_unlock(&registry_lock);
    }
    cipher_release(f->cipher);
    f->cipher = NULL;
    return f->real->pMethods->xClose(f->real);
}

/* Reads and opens the unit `u`: SQLITE_OK, SQLITE_IOERR_SHORT_READ past the end (zeros), or
 * SQLITE_IOERR_DATA when it does not authenticate. */
static int read_unit(cipher_file *f, const unit *u, unsigned char *plain) {
    unsigned char sealed[MAX_UNIT_PHYSICAL];
    int rc = f->real->pMethods->xRead(f->real, sealed, u->length + f->cipher->overhead, u->physical);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        memset(plain, 0, (size_t)u->length);
        return rc;
    }
    if (rc != SQLITE_OK) return rc;
    if (callbacks.open(f->cipher->cipher, u->tag, u->index, sealed, u->length, plain) != 0) return SQLITE_IOERR_DATA;
    return SQLITE_OK;
}

static int cipher_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    cipher_file *f = (cipher_file *)file;
    if (!f->cipher) {
        /* Before a key is attached SQLite reads only the 100-byte header (when the database
         * opens): it gets nothing, as from a new file, and reads it again once keyed. */
        memset(buffer, 0, (size_t)amount);
        return offset == 0 && amount <= 100 ? SQLITE_IOERR_SHORT_READ : SQLITE_IOERR_READ;
    }
    /* A read of the log that takes in a frame header is log recovery, which checks every frame's
     * checksum and stops at the first bad one: a unit that does not authenticate (a frame torn by
     * a crash) reads as zeros, which fail that check. Journals are played back the same way.
     * Reads of pages fail instead. */
    int lenient = f->kind == KIND_JOURNAL;
    if (f->kind == KIND_WAL) {
        for (sqlite3_int64 at = offset; at < offset + amount;) {
            unit u = unit_at(f, at);
            if (u.tag == 'H') { lenient = 1; break; }
            at = u.logical + u.length;
        }
    }
    unsigned char *out = buffer;
    sqlite3_int64 end = offset + amount, at = offset;
    int short_read = 0, rc = SQLITE_OK;
    unsigned char plain[PAGE];
    while (at < end) {
        unit u = unit_at(f, at);
        int within = (int)(at - u.logical);
        int n = u.length - within;
        if (n > end - at) n = (int)(end - at);
        if (!u.tag) {
            rc = f->real->pMethods->xRead(f->real, out, n, u.physical + within);
            if (rc == SQLITE_IOERR_SHORT_READ) short_read = 1;
            else if (rc != SQLITE_OK) break;
        } else {
            rc = read_unit(f, &u, plain);
            if (rc == SQLITE_IOERR_SHORT_READ) {
                short_read = 1;
            } else if (rc == SQLITE_IOERR_DATA && lenient) {
                memset(plain, 0, (size_t)u.length);
            } else if (rc != SQLITE_OK) {
                break;
            }
            memcpy(out, plain + within, (size_t)n);
        }
        rc = SQLITE_OK;
        at += n;
        out += n;
    }
    wipe(plain, sizeof plain);
    if (rc != SQLITE_OK) return rc;
    return short_read ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

static int cipher_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    cipher_file *f = (cipher_file *)file;
    if (!f->cipher) return SQLITE_IOERR_WRITE;
    const unsigned char *in = buffer;
    sqlite3_int64 end = offset + amount, at = offset;
    unsigned char plain[PAGE];
    unsigned char sealed[MAX_UNIT_PHYSICAL];
    int rc = SQLITE_OK;
    while (at < end) {
        unit u = unit_at(f, at);
        int within = (int)(at - u.logical);
        int n = u.length - within;
        if (n > end - at) n = (int)(end - at);
        if (!u.tag) {
            rc = f->real->pMethods->xWrite(f->real, in, n, u.physical + within);
        } else {
            const unsigned char *source = in;
            if (n < u.length) {
                /* Part of a unit: patch what is there (nothing, or a torn unit, reads as zeros). */
                if (read_unit(f, &u, plain) != SQLITE_OK) memset(plain, 0, (size_t)u.length);
                memcpy(plain + within, in, (size_t)n);
                source = plain;
            }
            if (callbacks.seal(f->cipher->cipher, u.tag, u.index, source, u.length, sealed) != 0) {
                rc = SQLITE_IOERR_WRITE;
            } else {
                rc = f->real->pMethods->xWrite(f->real, sealed, u.length + f->cipher->overhead, u.physical);
            }
        }
        if (rc != SQLITE_OK) break;
        at += n;
        in += n;
    }
    wipe(plain, sizeof plain);
    return rc;
}

static int cipher_truncate(sqlite3_file *file, sqlite3_int64 size) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xTruncate(f->real, physical_size(f, size));
}

static int cipher_sync(sqlite3_file *file, int flags) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xSync(f->real, flags);
}

static int cipher_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    cipher_file *f = (cipher_file *)file;
    sqlite3_int64 physical = 0;
    int rc = f->real->pMethods->xFileSize(f->real, &physical);
    if (rc != SQLITE_OK) return rc;
    /* Unkeyed, a file must not look empty: SQLite deletes the log of an empty database. */
    if (!f->cipher) return SQLITE_IOERR_FSTAT;
    *size = logical_size(f, physical);
    return SQLITE_OK;
}

static int cipher_lock(sqlite3_file *file, int level) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xLock(f->real, level);
}

static int cipher_unlock(sqlite3_file *file, int level) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xUnlock(f->real, level);
}

static int cipher_check_reserved_lock(sqlite3_file *file, int *out) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int read_header(sqlite3_file *real, unsigned char *header, sqlite3_int64 *size) {
    int rc = real->pMethods->xFileSize(real, size);
    if (rc != SQLITE_OK || *size < HEADER) return rc;
    return real->pMethods->xRead(real, header, HEADER, 0);
}

/* The header of the log beside a main file whose own header is missing (a crash after the log
 * got its first commit and before the main file's header reached the disk). */
static int log_header(const char *db_name, unsigned char *header) {
    size_t length = strlen(db_name);
    char *path = malloc(length + 5);
    if (!path) return 0;
    memcpy(path, db_name, length);
    memcpy(path + length, "-wal", 5);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0) return 0;
    ssize_t n = pread(fd, header, HEADER, 0);
    close(fd);
    return n == HEADER && memcmp(header, magic, sizeof magic) == 0;
}

static int attach(cipher_file *f, atoll_cipher_attach_args *args) {
    if (f->kind != KIND_MAIN || f->cipher) return SQLITE_MISUSE;
    unsigned char header[HEADER];
    sqlite3_int64 size = 0;
    int rc = read_header(f->real, header, &size);
    if (rc != SQLITE_OK) { args->detail = ATOLL_CIPHER_IO; args->code = rc; return SQLITE_IOERR; }
    void *cipher = NULL;
    if (size == 0) {
        if (f->read_only) { args->detail = ATOLL_CIPHER_EMPTY_READ_ONLY; return SQLITE_CANTOPEN; }
        /* A new file: write its header under an exclusive lock, so two openers agree on it. */
        sqlite3_file *real = f->real;
        rc = real->pMethods->xLock(real, SQLITE_LOCK_SHARED);
        for (int tries = 0; rc == SQLITE_OK && tries < 3000; tries++) {
            rc = real->pMethods->xLock(real, SQLITE_LOCK_EXCLUSIVE);
            if (rc != SQLITE_BUSY) break;
            base_vfs->xSleep(base_vfs, 10000);
        }
        if (rc == SQLITE_OK) rc = read_header(real, header, &size);
        if (rc == SQLITE_OK && size == 0) {
            unsigned char fresh[HEADER];
            int from_log = log_header(f->db_name, fresh);
            int result = callbacks.attach(args->key, from_log ? fresh : NULL, from_log ? NULL : fresh, &cipher);
            if (result != ATOLL_CIPHER_OK) {
                args->detail = result;
                rc = SQLITE_NOTADB;
            } else {
                rc = real->pMethods->xWrite(real, fresh, HEADER, 0);
                if (rc == SQLITE_OK) rc = real->pMethods->xSync(real, SQLITE_SYNC_NORMAL);
                memcpy(header, fresh, HEADER);
                size = HEADER;
                if (rc != SQLITE_OK) { args->detail = ATOLL_CIPHER_IO; args->code = rc; }
            }
        } else if (rc != SQLITE_OK) {
            args->detail = ATOLL_CIPHER_IO;
            args->code = rc;
        }
        real->pMethods->xUnlock(real, SQLITE_LOCK_NONE);
        if (rc != SQLITE_OK) {
            if (cipher) callbacks.release(cipher);
            return rc == SQLITE_NOTADB ? rc : SQLITE_IOERR;
        }
    }
    if (!cipher) {
        if (size < HEADER) { args->detail = ATOLL_CIPHER_NOT_A_REALM; return SQLITE_NOTADB; }
        if (memcmp(header, sqlite_magic, sizeof sqlite_magic) == 0) { args->detail = ATOLL_CIPHER_PLAINTEXT; return SQLITE_NOTADB; }
        if (memcmp(header, magic, sizeof magic) != 0) { args->detail = ATOLL_CIPHER_NOT_A_REALM; return SQLITE_NOTADB; }
        int result = callbacks.attach(args->key, header, NULL, &cipher);
        if (result != ATOLL_CIPHER_OK) { args->detail = result; return SQLITE_NOTADB; }
    }
    int overhead = header_overhead(header);
    if (!overhead) { callbacks.release(cipher); args->detail = ATOLL_CIPHER_UNSUPPORTED; return SQLITE_NOTADB; }
    cipher_ref *ref = malloc(sizeof *ref);
    if (!ref) { callbacks.release(cipher); return SQLITE_NOMEM; }
    atomic_init(&ref->refs, 1);
    ref->cipher = cipher;
    ref->overhead = overhead;
    memcpy(ref->header, header, HEADER);
    pthread_mutex_lock(&registry_lock);
    f->cipher = ref;
    pthread_mutex_unlock(&registry_lock);
    args->detail = ATOLL_CIPHER_OK;
    return SQLITE_OK;
}

static int cipher_file_control(sqlite3_file *file, int op, void *arg) {
    cipher_file *f = (cipher_file *)file;
    switch (op) {
    case ATOLL_CIPHER_FCNTL_ATTACH:
        return attach(f, arg);
    case SQLITE_FCNTL_SIZE_HINT: {
        sqlite3_int64 hint = physical_size(f, *(sqlite3_int64 *)arg);
        return f->real->pMethods->xFileControl(f->real, op, &hint);
    }
    case SQLITE_FCNTL_MMAP_SIZE:
        /* Pages on disk are ciphertext: never mapped. */
        *(sqlite3_int64 *)arg = 0;
        return SQLITE_OK;
    default:
        return f->real->pMethods->xFileControl(f->real, op, arg);
    }
}

static int cipher_sector_size(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int cipher_device_characteristics(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    /* Units straddle sectors on disk: claim no atomic or sequential writes. */
    int flags = f->real->pMethods->xDeviceCharacteristics(f->real);
    return flags & (SQLITE_IOCAP_POWERSAFE_OVERWRITE | SQLITE_IOCAP_UNDELETABLE_WHEN_OPEN | SQLITE_IOCAP_IMMUTABLE);
}

static int cipher_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xShmMap(f->real, region, size, extend, out);
}

static int cipher_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

static void cipher_shm_barrier(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    f->real->pMethods->xShmBarrier(f->real);
}

static int cipher_shm_unmap(sqlite3_file *file, int delete_flag) {
    cipher_file *f = (cipher_file *)file;
    return f->real->pMethods->xShmUnmap(f->real, delete_flag);
}

static const sqlite3_io_methods cipher_methods = {
    2, /* no xFetch/xUnfetch: no memory-mapped reads of ciphertext */
    cipher_close, cipher_read, cipher_write, cipher_truncate, cipher_sync, cipher_file_size,
    cipher_lock, cipher_unlock, cipher_check_reserved_lock, cipher_file_control,
    cipher_sector_size, cipher_device_characteristics,
    cipher_shm_map, cipher_shm_lock, cipher_shm_barrier, cipher_shm_unmap,
    NULL, NULL,
};

/* MARK: VFS */

static int cipher_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    cipher_file *f = (cipher_file *)file;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)(f + 1);
    if (flags & SQLITE_OPEN_MAIN_DB) f->kind = KIND_MAIN;
    else if (flags & SQLITE_OPEN_WAL) f->kind = KIND_WAL;
    else if (flags & SQLITE_OPEN_MAIN_JOURNAL) f->kind = KIND_JOURNAL;
    else return SQLITE_CANTOPEN; /* temporary files would hold plaintext: connections keep them in memory */
    if (!name) return SQLITE_CANTOPEN;
    cipher_ref *cipher = NULL;
    if (f->kind != KIND_MAIN) {
        cipher = registry_cipher(sqlite3_filename_database(name));
        if (!cipher) return SQLITE_CANTOPEN;
    }
    int opened = 0;
    int rc = base_vfs->xOpen(base_vfs, name, f->real, flags, &opened);
    if (rc != SQLITE_OK) {
        cipher_release(cipher);
        return rc;
    }
    if (out_flags) *out_flags = opened;
    f->read_only = (opened & SQLITE_OPEN_READONLY) != 0;
    if (f->kind != KIND_MAIN) {
        /* The log and journal carry the database's header: a missing one is written, a
         * different one (another database's file left behind) refuses the file. */
        unsigned char header[HEADER];
        sqlite3_int64 size = 0;
        rc = read_header(f->real, header, &size);
        if (rc == SQLITE_OK && size < HEADER && !f->read_only) {
            rc = f->real->pMethods->xWrite(f->real, cipher->header, HEADER, 0);
        } else if (rc == SQLITE_OK && size >= HEADER && memcmp(header, cipher->header, HEADER) != 0) {
            rc = SQLITE_CANTOPEN;
        }
        if (rc != SQLITE_OK) {
            f->real->pMethods->xClose(f->real);
            cipher_release(cipher);
            return rc;
        }
        f->cipher = cipher;
    } else {
        f->db_name = name;
        pthread_mutex_lock(&registry_lock);
        f->next = registry;
        registry = f;
        pthread_mutex_unlock(&registry_lock);
    }
    f->base.pMethods = &cipher_methods;
    return SQLITE_OK;
}

static int vfs_delete(sqlite3_vfs *v, const char *name, int sync_dir) { (void)v; return base_vfs->xDelete(base_vfs, name, sync_dir); }
static int vfs_access(sqlite3_vfs *v, const char *name, int flags, int *out) { (void)v; return base_vfs->xAccess(base_vfs, name, flags, out); }
static int vfs_full_pathname(sqlite3_vfs *v, const char *name, int n, char *out) { (void)v; return base_vfs->xFullPathname(base_vfs, name, n, out); }
static void *vfs_dl_open(sqlite3_vfs *v, const char *name) { (void)v; return base_vfs->xDlOpen(base_vfs, name); }
static void vfs_dl_error(sqlite3_vfs *v, int n, char *out) { (void)v; base_vfs->xDlError(base_vfs, n, out); }
static void (*vfs_dl_sym(sqlite3_vfs *v, void *handle, const char *symbol))(void) { (void)v; return base_vfs->xDlSym(base_vfs, handle, symbol); }
static void vfs_dl_close(sqlite3_vfs *v, void *handle) { (void)v; base_vfs->xDlClose(base_vfs, handle); }
static int vfs_randomness(sqlite3_vfs *v, int n, char *out) { (void)v; return base_vfs->xRandomness(base_vfs, n, out); }
static int vfs_sleep(sqlite3_vfs *v, int micros) { (void)v; return base_vfs->xSleep(base_vfs, micros); }
static int vfs_current_time(sqlite3_vfs *v, double *out) { (void)v; return base_vfs->xCurrentTime(base_vfs, out); }
static int vfs_last_error(sqlite3_vfs *v, int n, char *out) { (void)v; return base_vfs->xGetLastError ? base_vfs->xGetLastError(base_vfs, n, out) : 0; }
static int vfs_current_time_int64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return base_vfs->xCurrentTimeInt64(base_vfs, out); }

static pthread_once_t register_once = PTHREAD_ONCE_INIT;
static int register_result = SQLITE_OK;

static void register_vfs(void) {
    base_vfs = sqlite3_vfs_find(NULL);
    if (!base_vfs || base_vfs->iVersion < 2) { register_result = SQLITE_ERROR; return; }
    cipher_vfs.iVersion = 2;
    cipher_vfs.szOsFile = (int)sizeof(cipher_file) + base_vfs->szOsFile;
    cipher_vfs.mxPathname = base_vfs->mxPathname;
    cipher_vfs.zName = ATOLL_CIPHER_VFS_NAME;
    cipher_vfs.xOpen = cipher_open;
    cipher_vfs.xDelete = vfs_delete;
    cipher_vfs.xAccess = vfs_access;
    cipher_vfs.xFullPathname = vfs_full_pathname;
    cipher_vfs.xDlOpen = vfs_dl_open;
    cipher_vfs.xDlError = vfs_dl_error;
    cipher_vfs.xDlSym = vfs_dl_sym;
    cipher_vfs.xDlClose = vfs_dl_close;
    cipher_vfs.xRandomness = vfs_randomness;
    cipher_vfs.xSleep = vfs_sleep;
    cipher_vfs.xCurrentTime = vfs_current_time;
    cipher_vfs.xGetLastError = vfs_last_error;
    cipher_vfs.xCurrentTimeInt64 = vfs_current_time_int64;
    register_result = sqlite3_vfs_register(&cipher_vfs, 0);
}

int atoll_cipher_register(const atoll_cipher_callbacks *cbs) {
    if (!callbacks.seal) callbacks = *cbs;
    pthread_once(&register_once, register_vfs);
    return register_result;
}

int atoll_cipher_is_locked(const char *path) {
    sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
    if (!vfs) return -1;
    sqlite3_file *file = calloc(1, (size_t)vfs->szOsFile);
    if (!file) return -1;
    int out = 0;
    int rc = vfs->xOpen(vfs, path, file, SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_READWRITE, &out);
    if (rc != SQLITE_OK) {
        free(file);
        return -1;
    }
    int locked = 0;
    rc = file->pMethods->xLock(file, SQLITE_LOCK_SHARED);
    if (rc == SQLITE_OK) rc = file->pMethods->xLock(file, SQLITE_LOCK_EXCLUSIVE);
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) locked = 1;
    else if (rc != SQLITE_OK) locked = -1;
    file->pMethods->xUnlock(file, SQLITE_LOCK_NONE);
    file->pMethods->xClose(file);
    free(file);
    return locked;
}
