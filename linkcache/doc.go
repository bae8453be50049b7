// Package linkcache is a local cache of the results of link steps, in a
// folder on disk: the files a step writes, stored under a key that names
// everything they depend on. Package link computes the keys (see
// [github.com/goffload/goffload/link.Cache], which [*Cache] implements) and
// uses the cache for the slow steps of an offload link, the device links;
// this package only stores and returns bytes.
//
// The folder ([DefaultDir]: the user's cache folder's goffload, or
// $GOFFLOAD_CACHE) holds one entry per key, link-v1/KK/KEY/, with the
// outputs as files 0, 1, ... and a manifest giving each one's size and
// SHA-256. An entry is written in a temporary folder inside the cache and
// renamed into place whole, so that links sharing the cache at once never
// see a part of one; of two links storing the same key, one wins and the
// other's copy is dropped. Reading an entry checks every byte against the
// manifest: an entry that was cut short or changed is removed, and the
// caller sees an error, never the bytes. The entries used least recently
// are removed when the cache passes its bound ([Cache.MaxBytes], by default
// 10 GiB or $GOFFLOAD_CACHE_MAX).
//
// # Security
//
// The cache folder is input: another program, a full disk or a crash may
// have left anything in it. Get reads only regular files inside the entry's
// own folder (a symbolic link, a folder or a device in their place makes the
// entry invalid), reads a manifest of at most 64 KiB and a file only up to
// the size the manifest gives, which must be the file's size, and returns no
// byte it has not checked against the manifest's SHA-256 by the end of the
// stream. Keys are 64 lowercase hexadecimal digits, never a path. What the
// checks cannot tell is whether the bytes are what the step would make: a
// cache is trusted by whoever uses it, as a build cache is, so no other user
// may control a folder of it: [Open] refuses a cache folder, or a folder
// inside it, that is owned by another user (root aside) or that every user
// may write to, sticky bit or not, and every folder is checked so again
// before it is read, written or emptied; the cache follows no symbolic link
// inside itself (one in place of a folder makes it refuse, or skip, that
// folder: nothing outside is read, written or removed); and what it writes
// is never writable by others, whatever the umask. A cache server
// ([Remote], [Tiered]) can make misses only: every byte is checked against
// the SHA-256 its entry names before use.
package linkcache
