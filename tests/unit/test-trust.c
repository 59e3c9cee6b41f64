/* test-trust.c - the MAC of a recording's command (common/trust.h): made, checked, refused. */
#include "trust.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char home[64];
static char key[128];

static void fresh_home(void)
{
	snprintf(home, sizeof(home), "/tmp/agprof-trust-XXXXXX");
	cr_assert_not_null(mkdtemp(home));
	setenv("XDG_CONFIG_HOME", home, 1);
	snprintf(key, sizeof(key), "%s/agprof/key", home);
}

static void remove_home(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(trust, .init = fresh_home, .fini = remove_home);

/* A well-formed MAC that no key makes. */
static const char *mac_of_zeros(void)
{
	return "0000000000000000000000000000000000000000000000000000000000000000";
}

Test(trust, made_on_first_use_and_checked)
{
	char mac[COMMAND_MAC_HEX], again[COMMAND_MAC_HEX];
	struct stat st;

	cr_assert_eq(command_mac_check("[\"python\",\"t.py\"]", "/w", "00"), COMMAND_NO_MAC);
	cr_assert_eq(command_mac_check("[\"python\",\"t.py\"]", "/w", mac_of_zeros()), COMMAND_NO_KEY);
	cr_assert_eq(stat(key, &st), -1, "checking makes no key");
	cr_assert_eq(command_mac("[\"python\",\"t.py\"]", "/w", mac), 0);
	cr_assert_eq(stat(key, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(st.st_size, 32);
	cr_assert_eq(strlen(mac), 64);
	cr_assert_eq(command_mac("[\"python\",\"t.py\"]", "/w", again), 0);
	cr_assert_str_eq(mac, again, "one key, one MAC");
	cr_assert_eq(command_mac_check("[\"python\",\"t.py\"]", "/w", mac), COMMAND_TRUSTED);
	cr_assert_eq(command_mac_check("[\"sh\",\"t.py\"]", "/w", mac), COMMAND_FORGED, "argv edited");
	cr_assert_eq(command_mac_check("[\"python\",\"t.py\"]", "/x", mac), COMMAND_FORGED, "cwd edited");
	/* the length-prefixed fields: moving bytes from one to the other is no match */
	cr_assert_eq(command_mac_check("[\"python\",\"t.py\"]/", "w", mac), COMMAND_FORGED);
}

Test(trust, another_key_is_another_user)
{
	char mac[COMMAND_MAC_HEX];

	cr_assert_eq(command_mac("[\"a\"]", "/w", mac), 0);
	remove_home();
	fresh_home();
	cr_assert_eq(command_mac_check("[\"a\"]", "/w", mac), COMMAND_NO_KEY);
	cr_assert_eq(command_mac("[\"b\"]", "/w", (char[COMMAND_MAC_HEX]){ 0 }), 0);
	cr_assert_eq(command_mac_check("[\"a\"]", "/w", mac), COMMAND_FORGED);
}

Test(trust, unsafe_key_never_used)
{
	char mac[COMMAND_MAC_HEX], link_path[160];

	cr_assert_eq(command_mac("[\"a\"]", "/w", mac), 0);
	cr_assert_eq(chmod(key, 0644), 0);
	cr_assert_eq(command_mac_check("[\"a\"]", "/w", mac), COMMAND_NO_KEY, "a key others can read");
	cr_assert_eq(command_mac("[\"a\"]", "/w", mac), -1, "and no new one made over it");
	cr_assert_eq(chmod(key, 0600), 0);
	snprintf(link_path, sizeof(link_path), "%s.real", key);
	cr_assert_eq(rename(key, link_path), 0);
	cr_assert_eq(symlink(link_path, key), 0);
	cr_assert_eq(command_mac_check("[\"a\"]", "/w", mac), COMMAND_NO_KEY, "a key behind a symbolic link");
}
