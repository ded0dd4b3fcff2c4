#ifndef ATOLL_CIPHER_H
#define ATOLL_CIPHER_H

/*
 * An SQLite VFS shim that encrypts every file SQLite writes for an encrypted realm: the
 * database, its write-ahead log and its rollback journal. It holds no key and does no
 * cryptography itself: the callbacks (implemented in Swift with swift-crypto) seal and open
 * each unit. See docs/storage.md, "Encryption at rest", for the layout.
 */

#include <stdint.h>

/* The name to open a database with: `file:<path>?vfs=atoll-cipher`. */
#define ATOLL_CIPHER_VFS_NAME "atoll-cipher"

/* The file control that binds a key to a newly opened database (before it is read). */
#define ATOLL_CIPHER_FCNTL_ATTACH 0x41544c31

/* Bytes of the file header each encrypted file starts with (magic, version, salt, key check). */
#define ATOLL_CIPHER_HEADER_SIZE 64
/* Bytes a sealed unit takes beyond its plaintext, by the file header's format version:
 * version 1, a 12-byte random nonce and a 16-byte tag; version 2, a 24-byte random salt (half
 * derives the write's own key, half is its nonce) and a 16-byte tag. */
#define ATOLL_CIPHER_OVERHEAD_V1 28
#define ATOLL_CIPHER_OVERHEAD_V2 40
#define ATOLL_CIPHER_MAX_OVERHEAD ATOLL_CIPHER_OVERHEAD_V2
/* Plaintext bytes of a database page unit. */
#define ATOLL_CIPHER_PAGE_SIZE 4096

/* Why an attach failed (`detail` of the arguments). */
enum {
    ATOLL_CIPHER_OK = 0,
    /* The key does not open the file (or the header was tampered with). */
    ATOLL_CIPHER_WRONG_KEY = 1,
    /* The file is a plaintext SQLite database. */
    ATOLL_CIPHER_PLAINTEXT = 2,
    /* The file is neither an encrypted realm nor an SQLite database. */
    ATOLL_CIPHER_NOT_A_REALM = 3,
    /* The header names a format version this build does not know. */
    ATOLL_CIPHER_UNSUPPORTED = 4,
    /* Reading or writing the header failed; `code` has SQLite's result code. */
    ATOLL_CIPHER_IO = 5,
    /* A new file cannot get its header: it is empty and opened read-only. */
    ATOLL_CIPHER_EMPTY_READ_ONLY = 6,
};

typedef struct atoll_cipher_attach_args {
    /* The caller's key object, borrowed for the call. */
    void *key;
    /* Out: one of the ATOLL_CIPHER_ values, and an SQLite result code for ATOLL_CIPHER_IO. */
    int detail;
    int code;
} atoll_cipher_attach_args;

typedef struct atoll_cipher_callbacks {
    /* Seals `length` bytes of `plaintext` into `sealed` (length + the file's overhead bytes:
     * nonce or salt, ciphertext, tag), binding the unit's kind and index. Returns 0 on success. */
    int (*seal)(void *cipher, uint8_t kind, uint64_t unit, const void *plaintext, int32_t length, void *sealed);
    /* Opens what `seal` made; returns 0 on success, non-zero when the unit does not authenticate. */
    int (*open)(void *cipher, uint8_t kind, uint64_t unit, const void *sealed, int32_t length, void *plaintext);
    /* Binds `key` to a file. With `header` (the file's first ATOLL_CIPHER_HEADER_SIZE bytes)
     * checks it; without, fills `new_header` for a new file. On success sets `*cipher` to a
     * retained cipher and returns ATOLL_CIPHER_OK, else a reason. */
    int (*attach)(void *key, const uint8_t *header, uint8_t *new_header, void **cipher);
    /* Releases a cipher `attach` returned. */
    void (*release)(void *cipher);
} atoll_cipher_callbacks;

/* Registers the VFS (not as the default) once; later calls do nothing. Returns an SQLite code. */
int atoll_cipher_register(const atoll_cipher_callbacks *callbacks);

/* Whether a connection (of this process or another) holds a lock on the database at `path`,
 * tested with the default VFS's own locks, without reading the file: for an encrypted file
 * whose key the caller does not have. Returns 1 when locked, 0 when not, -1 on error. */
int atoll_cipher_is_locked(const char *path);

#endif
