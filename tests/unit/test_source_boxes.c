/* Detection sources: COCO instances JSON and Pascal VOC XML -> items with boxes. Every input
 * is a small file written here. */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/source.h"
#include "test_tmp.h"

TestSuite(source_boxes, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 60);

/* Write ld_tmp/rel (parent folders made); its full path into path_out. */
static void put(const char *rel, const char *text, char *path_out, size_t cap)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", ld_tmp, rel);
    for (char *q = p + strlen(ld_tmp) + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            mkdir(p, 0755);
            *q = '/';
        }
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "%s: %s", p, strerror(errno));
    fputs(text, f);
    fclose(f);
    if (path_out) snprintf(path_out, cap, "%s", p);
}

typedef struct warns {
    int n;
    char all[8192];
} warns;

static void on_warn(void *user, const char *msg)
{
    warns *w = user;
    w->n++;
    size_t l = strlen(w->all);
    snprintf(w->all + l, sizeof w->all - l, "%s\n", msg);
}

static void expect_box(const ld_source *s, size_t i, uint32_t k, float x1, float y1, float x2,
                       float y2, int32_t label, uint32_t flags)
{
    ld_box b;
    cr_assert_lt(k, ld__source_box_count(s, i), "item %zu has %u boxes", i,
                 ld__source_box_count(s, i));
    ld__source_box(s, i, k, &b);
    cr_expect(b.x1 == x1 && b.y1 == y1 && b.x2 == x2 && b.y2 == y2,
              "item %zu box %u: %g %g %g %g, want %g %g %g %g", i, k, b.x1, b.y1, b.x2, b.y2, x1,
              y1, x2, y2);
    cr_expect_eq(b.label, label, "item %zu box %u: label %d, want %d", i, k, b.label, label);
    cr_expect_eq(b.flags, flags, "item %zu box %u: flags %u, want %u", i, k, b.flags, flags);
}

/* ---- COCO ---------------------------------------------------------------------------------- */

/* Annotations before images, images not in name order, categories not in id order, keys we
 * skip (segmentation polygons and RLE, info, licenses, nested objects). */
static const char coco_ok[] =
    "{\"info\": {\"year\": 2017, \"nested\": {\"images\": [1, 2]}},\n"
    " \"annotations\": [\n"
    "  {\"segmentation\": [[1.5, 2, 3, 4, 5, 6]], \"area\": 10, \"iscrowd\": 0, \"image_id\": 7,"
    "   \"bbox\": [10, 20, 30, 40], \"category_id\": 18, \"id\": 1},\n"
    "  {\"segmentation\": {\"counts\": [1, 2, 3], \"size\": [4, 5]}, \"iscrowd\": 1,"
    "   \"image_id\": 3, \"bbox\": [0.5, 1.25, 2, 0], \"category_id\": 1, \"id\": 2},\n"
    "  {\"image_id\": 7, \"bbox\": [1e1, 0, 5, 5], \"category_id\": 1, \"id\": 3, \"iscrowd\": 0}\n"
    " ],\n"
    " \"images\": [\n"
    "  {\"id\": 7, \"file_name\": \"b.jpg\", \"width\": 640, \"height\": 480, \"license\": 3},\n"
    "  {\"id\": 3, \"file_name\": \"a.jpg\", \"width\": 10, \"height\": 10},\n"
    "  {\"id\": 9, \"file_name\": \"c.jpg\", \"width\": 10, \"height\": 10}\n"
    " ],\n"
    " \"licenses\": [{\"id\": 3, \"name\": \"x\"}],\n"
    " \"categories\": [{\"id\": 18, \"name\": \"dog\", \"supercategory\": \"animal\"},"
    " {\"id\": 1, \"name\": \"person\"}, {\"id\": 3, \"name\": \"car\"}]}\n";

Test(source_boxes, coco_boxes_order_flags_and_categories)
{
    char json[1024];
    put("instances.json", coco_ok, json, sizeof json);
    ld_source *s = NULL;
    ld_err e = {0};
    warns w = {0};
    int rc = ld__source_open_coco(json, "/data/img", 0, on_warn, NULL, &w, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_coco: %s", e.msg);
    cr_expect_eq(w.n, 0, "warnings: %s", w.all);
    cr_assert(ld__source_has_boxes(s));
    cr_assert_eq(ld__source_count(s), 3);
    cr_expect_str_eq(ld__source_rel(s, 0), "a.jpg");
    cr_expect_str_eq(ld__source_rel(s, 1), "b.jpg");
    cr_expect_str_eq(ld__source_rel(s, 2), "c.jpg");
    ld_buf pb = {0};
    ld_item it;
    cr_assert_eq(ld__source_get(s, 1, &pb, &it), LD_OK);
    cr_expect_str_eq(it.path, "/data/img/b.jpg");
    ld__buf_free(&pb);
    /* classes sorted by id: person (1), car (3), dog (18) */
    cr_assert_eq(ld__source_box_class_count(s), 3);
    cr_expect_str_eq(ld__source_box_class_name(s, 0), "person");
    cr_expect_str_eq(ld__source_box_class_name(s, 1), "car");
    cr_expect_str_eq(ld__source_box_class_name(s, 2), "dog");
    cr_expect_eq(ld__source_box_class_id(s, 0), 1);
    cr_expect_eq(ld__source_box_class_id(s, 2), 18);
    cr_assert_eq(ld__source_box_count(s, 0), 1);
    expect_box(s, 0, 0, 0.5f, 1.25f, 2.5f, 1.25f, 0, LD_BOX_CROWD);
    cr_assert_eq(ld__source_box_count(s, 1), 2); /* file order kept within an image */
    expect_box(s, 1, 0, 10, 20, 40, 60, 2, 0);
    expect_box(s, 1, 1, 10, 0, 15, 5, 0, 0);
    cr_expect_eq(ld__source_box_count(s, 2), 0, "an image without annotations is kept");
    ld__source_free(s);
}

static const char coco_bad[] =
    "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\"},\n"
    "  {\"id\": 2, \"file_name\": \"../etc/x.jpg\"}],\n"
    " \"categories\": [{\"id\": 1, \"name\": \"cat\"}],\n"
    " \"annotations\": [\n"
    "  {\"image_id\": 1, \"bbox\": [1, 2, 3, 4], \"category_id\": 1},\n"
    "  {\"image_id\": 99, \"bbox\": [1, 2, 3, 4], \"category_id\": 1},\n"
    "  {\"image_id\": 1, \"bbox\": [1, 2, 3, 4], \"category_id\": 77},\n"
    "  {\"image_id\": 1, \"bbox\": [1, 2, 3], \"category_id\": 1},\n"
    "  {\"image_id\": 1, \"bbox\": [1, 2, -3, 4], \"category_id\": 1},\n"
    "  {\"image_id\": 1, \"bbox\": [1, \"2\", 3, 4], \"category_id\": 1},\n"
    "  {\"image_id\": 1, \"bbox\": [1, 2, 3, 1e999], \"category_id\": 1}\n"
    " ]}\n";

Test(source_boxes, coco_bad_records_are_warnings_naming_file_and_line)
{
    char json[1024];
    put("bad.json", coco_bad, json, sizeof json);
    ld_source *s = NULL;
    ld_err e = {0};
    warns w = {0};
    int rc = ld__source_open_coco(json, NULL, 0, on_warn, NULL, &w, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_coco: %s", e.msg);
    cr_expect_eq(w.n, 7, "7 warnings, got %d:\n%s", w.n, w.all);
    char want[1200];
    const int lines[] = {2, 6, 7, 8, 9, 10, 11};
    for (int k = 0; k < 7; k++) {
        snprintf(want, sizeof want, "%s:%d: ", json, lines[k]);
        cr_expect(strstr(w.all, want), "no warning names %s:\n%s", want, w.all);
    }
    cr_expect(strstr(w.all, "image_id 99"), "%s", w.all);
    cr_expect(strstr(w.all, "category_id 77"), "%s", w.all);
    cr_assert_eq(ld__source_count(s), 1);
    cr_assert_eq(ld__source_box_count(s, 0), 1);
    expect_box(s, 0, 0, 1, 2, 4, 6, 0, 0);
    ld__source_free(s);

    /* strict: the first bad record is an error with file:line */
    s = NULL;
    rc = ld__source_open_coco(json, NULL, LD_SRC_STRICT, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "strict: rc %d (%s)", rc, e.msg);
    cr_expect_null(s);
    snprintf(want, sizeof want, "%s:2: ", json);
    cr_expect(strstr(e.msg, want), "strict: %s", e.msg);
}

Test(source_boxes, coco_malformed_json_is_an_error_naming_file_line_and_reason)
{
    char json[1024];
    put("m.json", "{\"images\": [\n{\"id\": 1, \"file_name\": \"a.jpg\"},\n{\"id\": 2,, }]}\n",
        json, sizeof json);
    ld_source *s = NULL;
    ld_err e = {0};
    int rc = ld__source_open_coco(json, NULL, 0, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "rc %d: %s", rc, e.msg);
    cr_expect_null(s);
    char want[1100];
    snprintf(want, sizeof want, "%s:3: malformed JSON", json);
    cr_expect(strstr(e.msg, want), "%s", e.msg);
    /* truncated */
    put("t.json", "{\"images\": [{\"id\": 1, \"file_name\": \"a.j", json, sizeof json);
    rc = ld__source_open_coco(json, NULL, 0, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "truncated: rc %d: %s", rc, e.msg);
    cr_expect(strstr(e.msg, "t.json:1: "), "%s", e.msg);
    /* not an object; no images */
    put("a.json", "[1, 2]", json, sizeof json);
    rc = ld__source_open_coco(json, NULL, 0, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "array: rc %d: %s", rc, e.msg);
    cr_expect(strstr(e.msg, "a.json"), "%s", e.msg);
    put("n.json", "{\"annotations\": []}", json, sizeof json);
    rc = ld__source_open_coco(json, NULL, 0, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "no images: rc %d: %s", rc, e.msg);
    snprintf(json, sizeof json, "%s/missing.json", ld_tmp);
    rc = ld__source_open_coco(json, NULL, 0, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EIO, "missing: rc %d: %s", rc, e.msg);
    cr_expect(strstr(e.msg, "missing.json"), "%s", e.msg);
}

static int cancel_tick(void *user, size_t found)
{
    (void)found;
    ++*(int *)user;
    return 1;
}

Test(source_boxes, coco_tick_cancels_a_long_listing)
{
    const int n = 5000;
    char *text = malloc((size_t)n * 64 + 64), *p = text;
    p += sprintf(p, "{\"images\": [");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s{\"id\": %d, \"file_name\": \"%06d.jpg\"}", i ? "," : "", i, i);
    sprintf(p, "]}");
    char json[1024];
    put("big.json", text, json, sizeof json);
    free(text);
    ld_source *s = NULL;
    ld_err e = {0};
    int ticks = 0;
    int rc = ld__source_open_coco(json, NULL, 0, NULL, cancel_tick, &ticks, &s, &e);
    cr_expect_eq(rc, LD_ECANCELED, "rc %d: %s", rc, e.msg);
    cr_expect_eq(ticks, 1);
    cr_expect_null(s);
    rc = ld__source_open_coco(json, NULL, 0, NULL, NULL, NULL, &s, &e);
    cr_assert_eq(rc, LD_OK, "%s", e.msg);
    cr_expect_eq(ld__source_count(s), (size_t)n);
    cr_expect_str_eq(ld__source_rel(s, 4999), "004999.jpg");
    ld__source_free(s);
}

/* ---- VOC ----------------------------------------------------------------------------------- */

static void voc_xml(const char *id, const char *body)
{
    char rel[256], text[4096];
    snprintf(rel, sizeof rel, "voc/Annotations/%s.xml", id);
    snprintf(text, sizeof text, "<annotation>\n%s</annotation>\n", body);
    put(rel, text, NULL, 0);
}

static void voc_fixture(void)
{
    voc_xml("2007_000001", "  <folder>VOC2012</folder>\n  <filename>2007_000001.jpg</filename>\n"
                           "  <object>\n    <name>dog</name>\n    <difficult>1</difficult>\n"
                           "    <bndbox><xmin>1</xmin><ymin>2</ymin><xmax>100</xmax>"
                           "<ymax>50</ymax></bndbox>\n  </object>\n"
                           "  <object>\n    <name>zebra</name>\n"
                           "    <bndbox><xmin>10.5</xmin><ymin>20</ymin><xmax>30</xmax>"
                           "<ymax>40</ymax></bndbox>\n  </object>\n");
    voc_xml("2007_000002", "  <object><name>apple</name><difficult>0</difficult>"
                           "<bndbox><xmin>5</xmin><ymin>6</ymin><xmax>7</xmax><ymax>8</ymax>"
                           "</bndbox></object>\n"
                           "  <object><name>aeroplane</name>"
                           "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>1</xmax><ymax>1</ymax>"
                           "</bndbox></object>\n");
    voc_xml("2007_000003", "  <filename>x &amp; y.jpg</filename>\n");
}

Test(source_boxes, voc_boxes_difficult_and_classes)
{
    voc_fixture();
    char dir[512];
    snprintf(dir, sizeof dir, "%s/voc", ld_tmp);
    put("voc/ImageSets/Main/train.txt", "2007_000002\n\n2007_000001  1\n", NULL, 0);
    ld_source *s = NULL;
    ld_err e = {0};
    warns w = {0};
    int rc = ld__source_open_voc(dir, "ImageSets/Main/train.txt", 0, on_warn, NULL, &w, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_voc: %s", e.msg);
    cr_expect_eq(w.n, 0, "%s", w.all);
    cr_assert_eq(ld__source_count(s), 2);
    cr_expect_str_eq(ld__source_rel(s, 0), "JPEGImages/2007_000002.jpg"); /* list order */
    cr_expect_str_eq(ld__source_rel(s, 1), "JPEGImages/2007_000001.jpg");
    ld_buf pb = {0};
    ld_item it;
    cr_assert_eq(ld__source_get(s, 1, &pb, &it), LD_OK);
    char want[1024];
    snprintf(want, sizeof want, "%s/JPEGImages/2007_000001.jpg", dir);
    cr_expect_str_eq(it.path, want);
    ld__buf_free(&pb);
    cr_assert_eq(ld__source_box_class_count(s), 22);
    cr_expect_str_eq(ld__source_box_class_name(s, 0), "aeroplane");
    cr_expect_str_eq(ld__source_box_class_name(s, 19), "tvmonitor");
    cr_expect_str_eq(ld__source_box_class_name(s, 20), "apple"); /* sorted after the 20 */
    cr_expect_str_eq(ld__source_box_class_name(s, 21), "zebra");
    cr_expect_eq(ld__source_box_class_id(s, 21), 21);
    cr_expect_eq(ld__source_box_class_id(s, 11), 11);
    cr_assert_eq(ld__source_box_count(s, 0), 2);
    expect_box(s, 0, 0, 4, 5, 7, 8, 20, 0);
    expect_box(s, 0, 1, 0, 0, 1, 1, 0, 0);
    cr_assert_eq(ld__source_box_count(s, 1), 2);
    expect_box(s, 1, 0, 0, 1, 100, 50, 11, LD_BOX_DIFFICULT); /* 1-based -> 0-based */
    expect_box(s, 1, 1, 9.5f, 19, 30, 40, 21, 0);
    ld__source_free(s);

    /* no list: every annotation, sorted; <filename> with an entity of XML's own */
    s = NULL;
    rc = ld__source_open_voc(dir, NULL, 0, NULL, NULL, NULL, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_voc: %s", e.msg);
    cr_assert_eq(ld__source_count(s), 3);
    cr_expect_str_eq(ld__source_rel(s, 0), "JPEGImages/2007_000001.jpg");
    cr_expect_str_eq(ld__source_rel(s, 2), "JPEGImages/x & y.jpg");
    cr_expect_eq(ld__source_box_count(s, 2), 0);
    ld__source_free(s);
}

Test(source_boxes, voc_malformed_or_missing_files_are_warnings_or_strict_errors)
{
    voc_fixture();
    voc_xml("bad", "  <object>\n    <name>dog</name>\n  </objekt>\n");
    voc_xml("nobox", "  <object>\n    <name>dog</name>\n    <bndbox><xmin>1</xmin></bndbox>\n"
                     "  </object>\n");
    char dir[512], list[1024];
    snprintf(dir, sizeof dir, "%s/voc", ld_tmp);
    put("list.txt", "2007_000001\nbad\nnobox\nmissing\n../x\n", list, sizeof list);
    ld_source *s = NULL;
    ld_err e = {0};
    warns w = {0};
    int rc = ld__source_open_voc(dir, list, 0, on_warn, NULL, &w, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_voc: %s", e.msg);
    cr_expect_eq(ld__source_count(s), 1);
    cr_expect_eq(w.n, 4, "%s", w.all);
    char want[1200];
    snprintf(want, sizeof want, "%s/Annotations/bad.xml:4: malformed XML", dir);
    cr_expect(strstr(w.all, want), "want %s in:\n%s", want, w.all);
    snprintf(want, sizeof want, "%s/Annotations/nobox.xml:4: ", dir);
    cr_expect(strstr(w.all, want), "want %s in:\n%s", want, w.all);
    cr_expect(strstr(w.all, "missing.xml"), "%s", w.all);
    snprintf(want, sizeof want, "%s:5: ", list);
    cr_expect(strstr(w.all, want), "want %s in:\n%s", want, w.all);
    ld__source_free(s);

    s = NULL;
    put("list2.txt", "2007_000001\nbad\n", list, sizeof list);
    rc = ld__source_open_voc(dir, list, LD_SRC_STRICT, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "strict: rc %d (%s)", rc, e.msg);
    cr_expect_null(s);
    snprintf(want, sizeof want, "%s/Annotations/bad.xml:4: ", dir);
    cr_expect(strstr(e.msg, want), "%s", e.msg);
    put("list3.txt", "missing\n", list, sizeof list);
    rc = ld__source_open_voc(dir, list, LD_SRC_STRICT, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EIO, "strict missing: rc %d (%s)", rc, e.msg);
    cr_expect(strstr(e.msg, "missing.xml"), "%s", e.msg);
}

Test(source_boxes, voc_refuses_external_entities_and_entity_bombs)
{
    put("voc/Annotations/xxe.xml",
        "<?xml version=\"1.0\"?>\n<!DOCTYPE annotation [\n"
        "  <!ENTITY pw SYSTEM \"file:///etc/passwd\">\n]>\n"
        "<annotation><filename>&pw;</filename><object><name>&pw;</name><bndbox><xmin>1</xmin>"
        "<ymin>1</ymin><xmax>2</xmax><ymax>2</ymax></bndbox></object></annotation>\n",
        NULL, 0);
    put("voc/Annotations/lol.xml",
        "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n"
        " <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
        " <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
        " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
        " <!ENTITY lol9 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
        "]>\n<annotation><object><name>&lol9;</name></object></annotation>\n",
        NULL, 0);
    put("voc/Annotations/sys.xml",
        "<?xml version=\"1.0\"?>\n<!DOCTYPE annotation SYSTEM \"file:///etc/passwd\">\n"
        "<annotation><filename>a.jpg</filename></annotation>\n",
        NULL, 0);
    put("voc/Annotations/undeclared.xml", "<annotation>\n<filename>&pw;</filename></annotation>\n",
        NULL, 0);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/voc", ld_tmp);
    ld_source *s = NULL;
    ld_err e = {0};
    warns w = {0};
    int rc = ld__source_open_voc(dir, NULL, 0, on_warn, NULL, &w, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_voc: %s", e.msg);
    cr_expect_eq(ld__source_count(s), 0, "every file refused");
    cr_expect_eq(ld__source_box_class_count(s), 20, "no class name was read");
    cr_expect_eq(w.n, 4, "%s", w.all);
    cr_expect_null(strstr(w.all, "root:"), "/etc/passwd leaked: %s", w.all);
    char want[1200];
    snprintf(want, sizeof want, "%s/Annotations/xxe.xml:2: refused", dir);
    cr_expect(strstr(w.all, want), "want %s in:\n%s", want, w.all);
    snprintf(want, sizeof want, "%s/Annotations/lol.xml:2: refused", dir);
    cr_expect(strstr(w.all, want), "want %s in:\n%s", want, w.all);
    snprintf(want, sizeof want, "%s/Annotations/undeclared.xml:2: ", dir);
    cr_expect(strstr(w.all, want), "want %s in:\n%s", want, w.all);
    ld__source_free(s);
    for (int k = 0; k < 3; k++) {
        static const char *const ids[] = {"xxe\n", "lol\n", "undeclared\n"};
        char list[1024];
        put("l.txt", ids[k], list, sizeof list);
        s = NULL;
        rc = ld__source_open_voc(dir, list, LD_SRC_STRICT, NULL, NULL, NULL, &s, &e);
        cr_expect_eq(rc, LD_EFORMAT, "%s strict: rc %d (%s)", ids[k], rc, e.msg);
        cr_expect_null(s);
    }
}

Test(source_boxes, voc_refuses_a_file_over_1_mib)
{
    size_t n = (1u << 20) + 100;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    memcpy(big, "<annotation>", 12);
    memcpy(big + n - 14, "</annotation>\n", 14);
    big[n] = '\0';
    put("voc/Annotations/big.xml", big, NULL, 0);
    free(big);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/voc", ld_tmp);
    ld_source *s = NULL;
    ld_err e = {0};
    int rc = ld__source_open_voc(dir, NULL, LD_SRC_STRICT, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "rc %d (%s)", rc, e.msg);
    cr_expect(strstr(e.msg, "big.xml"), "%s", e.msg);
}

Test(source_boxes, coco_lines_are_counted_across_64_kib_pieces)
{
    const int n = 3000; /* ~150 KB, one image a line: the bad record is in the third piece */
    char *text = malloc((size_t)n * 64 + 256), *p = text;
    p += sprintf(p, "{\"images\": [\n");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s{\"id\": %d, \"file_name\": \"%06d.jpg\"}\n", i ? "," : "", i, i);
    sprintf(p, "],\n\"categories\": [{\"id\": 1, \"name\": \"x\"}],\n\"annotations\": [\n"
               "{\"image_id\": 5, \"bbox\": [1, 2, 3, 4], \"category_id\": 1},\n"
               "{\"image_id\": 5, \"bbox\": [1, 2, 3, -4], \"category_id\": 1}]}\n");
    char json[1024];
    put("lines.json", text, json, sizeof json);
    free(text);
    ld_source *s = NULL;
    ld_err e = {0};
    int rc = ld__source_open_coco(json, NULL, LD_SRC_STRICT, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "rc %d: %s", rc, e.msg);
    char want[1100];
    snprintf(want, sizeof want, "%s:%d: ", json, n + 6); /* "{", n images, 3 lines, annotation 1 */
    cr_expect(strstr(e.msg, want), "want %s in %s", want, e.msg);
}

Test(source_boxes, voc_tick_cancels_a_long_listing)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/voc", ld_tmp);
    for (int i = 0; i < 4100; i++) {
        char id[32];
        snprintf(id, sizeof id, "%06d", i);
        voc_xml(id, "");
    }
    ld_source *s = NULL;
    ld_err e = {0};
    int ticks = 0;
    int rc = ld__source_open_voc(dir, NULL, 0, NULL, cancel_tick, &ticks, &s, &e);
    cr_expect_eq(rc, LD_ECANCELED, "rc %d: %s", rc, e.msg);
    cr_expect_eq(ticks, 1);
    cr_expect_null(s);
    rc = ld__source_open_voc(dir, NULL, 0, NULL, NULL, NULL, &s, &e);
    cr_assert_eq(rc, LD_OK, "%s", e.msg);
    cr_expect_eq(ld__source_count(s), 4100);
    cr_expect_str_eq(ld__source_rel(s, 4099), "JPEGImages/004099.jpg");
    ld__source_free(s);
}

Test(source_boxes, voc_refuses_a_dtd_spelled_in_utf16)
{
    /* in UTF-16 "<!DOCTYPE" is not the bytes a scan looks for: the file is read as UTF-8 */
    const char *doc = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<!DOCTYPE annotation [\n"
                      "<!ENTITY pw SYSTEM \"file:///etc/passwd\">]>\n"
                      "<annotation><filename>&pw;</filename></annotation>\n";
    char dir[512], path[1024];
    put("voc/Annotations/u16.xml", "", path, sizeof path);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputc(0xff, f), fputc(0xfe, f);
    for (const char *p = doc; *p; p++)
        fputc(*p, f), fputc(0, f);
    fclose(f);
    snprintf(dir, sizeof dir, "%s/voc", ld_tmp);
    ld_source *s = NULL;
    ld_err e = {0};
    int rc = ld__source_open_voc(dir, NULL, LD_SRC_STRICT, NULL, NULL, NULL, &s, &e);
    cr_expect_eq(rc, LD_EFORMAT, "rc %d (%s)", rc, e.msg);
    cr_expect(strstr(e.msg, "u16.xml"), "%s", e.msg);
    cr_expect_null(strstr(e.msg, "root:"), "%s", e.msg);
}
