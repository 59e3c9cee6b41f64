/* trust.c - the MAC of a recording's command metadata (trust.h). */
#include "trust.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_BYTES 32

const char *trust_key_path(char *buf, size_t n)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	struct passwd *pw;
	int len;

	if (xdg && xdg[0] == '/')
		len = snprintf(buf, n, "%s/agprof/key", xdg);
	else if ((home && home[0] == '/') || ((pw = getpwuid(geteuid())) && (home = pw->pw_dir) && home[0] == '/'))
		len = snprintf(buf, n, "%s/.config/agprof/key", home);
	else
		return NULL;
	return len > 0 && (size_t)len < n ? buf : NULL;
}

/* The key's directory, made when missing (mode 0700); 0 when it is a directory of ours. */
static int key_dir(char *path)
{
	char *slash = strrchr(path, '/'), *parent;
	struct stat st;
	int ret = -1;

	*slash = '\0';
	parent = strrchr(path, '/');
	if (parent && parent != path) {
		*parent = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			goto out;
		*parent = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		goto out;
	ret = lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ? -1 : 0;
out:
	if (parent)
		*parent = '/';
	*slash = '/';
	return ret;
}

/* The key from path: a regular file of ours, no group/other bits, KEY_BYTES long.  1 read, 0 absent, -1 unusable. */
static int read_key(const char *path, unsigned char key[KEY_BYTES])
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int ok;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
	     st.st_size == KEY_BYTES && read(fd, key, KEY_BYTES) == KEY_BYTES;
	close(fd);
	return ok ? 1 : -1;
}

/* A new key written beside path, then linked in place: two first runs agree on one key.  0 or -1. */
static int make_key(const char *path)
{
	unsigned char key[KEY_BYTES];
	char tmp[4096];
	int fd, ok;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp) || RAND_bytes(key, KEY_BYTES) != 1 ||
	    (fd = mkstemp(tmp)) < 0)
		return -1;
	ok = fchmod(fd, 0600) == 0 && write(fd, key, KEY_BYTES) == KEY_BYTES && fsync(fd) == 0;
	ok &= close(fd) == 0;
	ok = ok && (link(tmp, path) == 0 || errno == EEXIST);
	unlink(tmp);
	OPENSSL_cleanse(key, sizeof(key));
	return ok ? 0 : -1;
}

/* The user's key into key; create: make it when missing.  0 or -1. */
static int load_key(unsigned char key[KEY_BYTES], int create)
{
	char path[4096];
	int r;

	if (!trust_key_path(path, sizeof(path)))
		return -1;
	if ((r = read_key(path, key)) == 0 && create && !key_dir(path) && !make_key(path))
		r = read_key(path, key);
	return r == 1 ? 0 : -1;
}

/* /etc/machine-id's first line, or "" (containers may have none: the uid and directory still bind). */
static void machine_id(char out[64])
{
	FILE *f = fopen("/etc/machine-id", "re");

	out[0] = '\0';
	if (!f)
		f = fopen("/var/lib/dbus/machine-id", "re");
	if (f) {
		if (!fgets(out, 64, f))
			out[0] = '\0';
		out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

/* Each field as LENGTH ':' BYTES, so that no two field lists read the same. */
static void add_field(struct strbuf *sb, const char *s)
{
	strbuf_addf(sb, "%zu:", strlen(s));
	strbuf_addstr(sb, s);
}

static int mac_with(const unsigned char key[KEY_BYTES], const char *argv_json, const char *cwd,
		    char out[COMMAND_MAC_HEX])
{
	struct strbuf msg = STRBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	char id[64];
	int ret = -1;

	machine_id(id);
	strbuf_addstr(&msg, "agprof-command-v1\n");
	add_field(&msg, argv_json);
	add_field(&msg, cwd);
	add_field(&msg, id);
	strbuf_addf(&msg, "uid:%lu", (unsigned long)geteuid());
	if (!strbuf_failed(&msg) && HMAC(EVP_sha256(), key, KEY_BYTES, (const unsigned char *)msg.buf, msg.len, md,
					 &len) && len == 32) {
		for (unsigned i = 0; i < len; i++)
			snprintf(out + 2 * i, 3, "%02x", md[i]);
		ret = 0;
	}
	strbuf_release(&msg);
	return ret;
}

int command_mac(const char *argv_json, const char *cwd, char out[COMMAND_MAC_HEX])
{
	unsigned char key[KEY_BYTES];
	int ret;

	if (!argv_json || !cwd || load_key(key, 1))
		return -1;
	ret = mac_with(key, argv_json, cwd, out);
	OPENSSL_cleanse(key, sizeof(key));
	return ret;
}

enum command_trust command_mac_check(const char *argv_json, const char *cwd, const char *mac)
{
	unsigned char key[KEY_BYTES];
	char want[COMMAND_MAC_HEX];
	int ok;

	if (!mac || strlen(mac) != COMMAND_MAC_HEX - 1 || !argv_json || !cwd)
		return COMMAND_NO_MAC;
	if (load_key(key, 0))
		return COMMAND_NO_KEY;
	ok = !mac_with(key, argv_json, cwd, want) && !CRYPTO_memcmp(want, mac, COMMAND_MAC_HEX - 1);
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(want, sizeof(want));
	return ok ? COMMAND_TRUSTED : COMMAND_FORGED;
}

const char *command_trust_reason(enum command_trust t)
{
	switch (t) {
	case COMMAND_TRUSTED: return "recorded by your agprof";
	case COMMAND_NO_MAC: return "the recording carries no proof that your agprof recorded it";
	case COMMAND_NO_KEY: return "you have no agprof key to check it with";
	default: return "it was not recorded by your agprof on this machine, or its command was edited";
	}
}
