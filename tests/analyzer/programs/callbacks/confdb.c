#include "confdb.h"
#include <string.h>

static int next_record(struct line_reader *r, struct parse_scratch *out) {
    char line[256];
    if (!fgets(line, sizeof line, r->in)) return 0;
    r->lineno++;
    return sscanf(line, "%15s %239[^\n]", out->tag, out->body) == 2;
}

static int dispatch(struct confdb *db, const char *tag, const char *body) {
    for (int i = 0; i < nhandlers; i++)
        if (strcmp(handlers[i]->tag, tag) == 0) return handlers[i]->load(db, body);
    return -1;
}

int confdb_load(struct confdb *db, const char *path) {
    struct line_reader r = {0};
    struct parse_scratch rec;
    r.in = fopen(path, "r");
    r.db = db;
    if (!r.in) return -1;
    if (!nhandlers) register_handlers();
    while (next_record(&r, &rec)) dispatch(r.db, rec.tag, rec.body);
    fclose(r.in);
    return 0;
}

int confdb_save(struct confdb *db, const char *path) {
    FILE *out = fopen(path, "w");
    if (!out) return -1;
    for (int i = 0; i < nhandlers; i++) handlers[i]->save(db, out);
    return fclose(out);
}

int main(int argc, char **argv) {
    static struct confdb db;
    const char *path = argc > 1 ? argv[1] : "conf.db";
    confdb_load(&db, path);
    return confdb_save(&db, path);
}
