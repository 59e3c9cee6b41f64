/*
 * trust.h - whether a recording's command line was written by this user's
 * own agprof.  Recordings travel (CI artifacts, bug reports), and anything
 * in one can be edited: `fix --verify` runs the recorded command only when
 * its metadata carries a MAC made with a key that never leaves the user's
 * config directory.  HMAC-SHA256 from OpenSSL's libcrypto.
 *
 * The key: 32 random bytes in $XDG_CONFIG_HOME/agprof/key (else
 * ~/.config/agprof/key), mode 0600, made on first use.  A key file that is
 * not a regular file of ours with no group or other bits is never used.
 */
#ifndef AGPROF_TRUST_H
#define AGPROF_TRUST_H

#include <stddef.h>

#define COMMAND_MAC_HEX 65 /* 64 hex digits and the NUL */

enum command_trust {
	COMMAND_TRUSTED = 0, /* this user's agprof wrote exactly this command, directory and machine */
	COMMAND_NO_MAC,      /* the recording carries none (older agprof, or no key when recorded) */
	COMMAND_NO_KEY,      /* this user has no usable key: nothing can be checked */
	COMMAND_FORGED,      /* the MAC does not match: another user's, another machine's, or edited */
};

/*
 * The MAC of (argv_json, cwd) with this machine's id and the effective uid,
 * under the user's key (made when missing), as hex into out.  0, or -1 when
 * no key can be had (the recording then has no MAC; nothing is printed).
 */
int command_mac(const char *argv_json, const char *cwd, char out[COMMAND_MAC_HEX]);

/* Whether mac (hex, may be NULL) is command_mac(argv_json, cwd) under the existing key. */
enum command_trust command_mac_check(const char *argv_json, const char *cwd, const char *mac);

/* Why a check failed, for one line of error: "the recording carries no ...". */
const char *command_trust_reason(enum command_trust t);

/* The key file's path into buf (n bytes); NULL when neither XDG_CONFIG_HOME nor a home is known. */
const char *trust_key_path(char *buf, size_t n);

#endif
