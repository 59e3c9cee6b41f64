/* test-json.c - the JSON writer (common/json.h): commas, nesting, escaping, numbers, URIs. */
#include "json.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct strbuf out = STRBUF_INIT;
static struct json j;

static void setup(void)
{
	strbuf_reset(&out);
	json_init(&j, &out);
}

static void teardown(void)
{
	strbuf_release(&out);
}

TestSuite(json, .init = setup, .fini = teardown);

Test(json, commas_and_nesting)
{
	json_begin_object(&j);
	json_kv_str(&j, "a", "x");
	json_kv_int(&j, "b", -3);
	json_key(&j, "c");
	json_begin_array(&j, 0);
	json_int(&j, 1);
	json_begin_object(&j);
	json_end_object(&j);
	json_begin_array(&j, 0);
	json_end_array(&j);
	json_null(&j);
	json_end_array(&j);
	json_kv_bool(&j, "d", 1);
	json_kv_str(&j, "e", NULL);
	json_end_object(&j);
	cr_assert_str_eq(out.buf, "{\"a\":\"x\",\"b\":-3,\"c\":[1,{},[],null],\"d\":true,\"e\":null}");
}

Test(json, lines_arrays_put_each_element_on_its_line)
{
	json_begin_array(&j, JSON_LINES);
	json_int(&j, 1);
	json_int(&j, 2);
	json_end_array(&j);
	json_begin_array(&j, JSON_LINES);
	json_end_array(&j);
	cr_assert_str_eq(out.buf, "[\n1,\n2][]");
}

Test(json, numbers)
{
	json_begin_array(&j, 0);
	json_num(&j, 0.25);
	json_num(&j, 1e300 * 1e300);
	json_num(&j, NAN);
	json_fixed(&j, 1.5, 3);
	json_end_array(&j);
	cr_assert_str_eq(out.buf, "[0.25,null,null,1.500]");
}

Test(json, strings_are_escaped_and_invalid_utf8_replaced)
{
	json_begin_array(&j, 0);
	json_str(&j, "q\"b\\n\n\x01\x7f");
	json_str(&j, "\xc3\xa9\xff");          /* é, then a byte that is not UTF-8 */
	json_str(&j, "\xe2\x80\xa8");          /* U+2028 */
	json_end_array(&j);
	cr_assert_str_eq(out.buf, "[\"q\\\"b\\\\n\\n\\u0001\\u007f\",\"\xc3\xa9\\ufffd\",\"\\u2028\"]");
}

Test(json, keys_are_escaped_too)
{
	json_begin_object(&j);
	json_kv_int(&j, "a\"b", 1);
	json_end_object(&j);
	cr_assert_str_eq(out.buf, "{\"a\\\"b\":1}");
}

Test(json, file_uris_are_percent_encoded)
{
	json_begin_array(&j, 0);
	json_file_uri(&j, "/home/me/my proj/#1/é.py", 0);
	json_file_uri(&j, "/work", 1);
	json_file_uri(&j, "/", 1);
	json_path_uri(&j, "src/a b.py");
	json_end_array(&j);
	cr_assert_str_eq(out.buf, "[\"file:///home/me/my%20proj/%231/%C3%A9.py\",\"file:///work/\",\"file:///\","
				  "\"src/a%20b.py\"]");
}

Test(json, integers_at_the_edges)
{
	json_begin_array(&j, 0);
	json_int(&j, 0);
	json_int(&j, -1);
	json_int(&j, 1234567890123LL);
	json_int(&j, -9223372036854775807LL - 1);
	json_int(&j, 9223372036854775807LL);
	json_end_array(&j);
	cr_assert_str_eq(out.buf, "[0,-1,1234567890123,-9223372036854775808,9223372036854775807]");
}

Test(json, a_sink_gets_the_text_as_it_fills_and_the_rest_stays)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	char big[1000];
	size_t n = 3 * JSON_SINK_BYTES / sizeof(big);

	cr_assert_not_null(f);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	json_set_sink(&j, f);
	json_begin_array(&j, 0);
	for (size_t i = 0; i < n; i++)
		json_str(&j, big);
	json_end_array(&j);
	cr_assert_lt(out.len, JSON_SINK_BYTES + sizeof(big) + 4, "out holds at most a sink's worth");
	fwrite(out.buf, 1, out.len, f);
	cr_assert_eq(fclose(f), 0);
	/* the whole text, in order: [, n quoted strings of 999 x's with commas between, ] */
	cr_assert_eq(len, 2 + n * (sizeof(big) + 2) - 1);
	cr_assert_eq(text[0], '[');
	cr_assert_eq(text[len - 1], ']');
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(text[1 + i * (sizeof(big) + 2)], '"');
	free(text);
}
