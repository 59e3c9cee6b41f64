/* test-tfconfig.c - TF_CONFIG's task and cluster (common/tfconfig.h), and its bounds on bad input. */
#include "tfconfig.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static struct tf_config tc;
static char err[128];

Test(tfconfig, worker_of_two)
{
	const char *s = "{\"cluster\": {\"worker\": [\"127.0.0.1:1\", \"127.0.0.1:2\"]},\n"
			" \"task\": {\"type\": \"worker\", \"index\": 1}, \"rpc_layer\": \"grpc\"}";

	cr_assert_eq(tf_config_parse(s, &tc, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(tc.task_type, "worker");
	cr_assert_eq(tc.task_index, 1);
	cr_assert_eq(tc.cluster_size, 2);
}

Test(tfconfig, chief_workers_and_ps_count_as_one_cluster)
{
	const char *s = "{\"task\":{\"index\":0,\"type\":\"chief\"},\"cluster\":{\"chief\":[\"a:1\"],"
			"\"worker\":[\"b:1\",\"c:1\"],\"ps\":[\"d:1\"]},\"environment\":{\"x\":[1,true,null,{\"y\":-2.5e3}]}}";

	cr_assert_eq(tf_config_parse(s, &tc, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(tc.task_type, "chief");
	cr_assert_eq(tc.task_index, 0);
	cr_assert_eq(tc.cluster_size, 4);
}

Test(tfconfig, absent_fields)
{
	cr_assert_eq(tf_config_parse("{}", &tc, err, sizeof(err)), 0);
	cr_assert_str_eq(tc.task_type, "");
	cr_assert_eq(tc.task_index, -1);
	cr_assert_eq(tc.cluster_size, 0);
}

Test(tfconfig, bad_json_is_an_error_not_a_crash)
{
	static const char *const bad[] = {
		"", "[]", "{", "{\"task\":", "{\"task\":{\"index\":}}", "{\"a\":\"unterminated}",
		"{\"a\":1} x", "{\"a\" 1}", "{\"a\":1,}", "{\"task\":{\"index\":-4}}", "nul",
		"{\"a\":[1 2]}", "{\"a\":\"\\",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(tf_config_parse(bad[i], &tc, err, sizeof(err)), -1, "accepted '%s'", bad[i]);
		cr_expect_neq(err[0], '\0', "no reason for '%s'", bad[i]);
	}
}

Test(tfconfig, depth_is_bounded)
{
	char *s = malloc(200002);

	memset(s, '[', 100000);
	s[0] = '{';
	strcpy(s + 1, "\"a\":");
	memset(s + 5, '[', 100000 - 5);
	s[100000] = '\0';
	cr_assert_eq(tf_config_parse(s, &tc, err, sizeof(err)), -1);
	cr_assert(strstr(err, "deep"), "%s", err);
	free(s);
}
