/* fuzz_scene.h - the scene targets' input: a scene file, optionally followed by a line
 * "//set" and then one --set KEY=VALUE per line (at most FUZZ_MAX_SETS). */
#ifndef TP_FUZZ_SCENE_H
#define TP_FUZZ_SCENE_H

#include "fuzz_util.h"
#include "scene/scene.h"

#define FUZZ_MAX_SETS 8

typedef struct fuzz_scene {
	char *text; /* the whole input, NUL-terminated, split in place */
	const char *sets[FUZZ_MAX_SETS];
	int nsets;
	const char *path;
} fuzz_scene;

static void fuzz_scene_split(fuzz_scene *fs, const uint8_t *data, size_t size)
{
	memset(fs, 0, sizeof *fs);
	fs->text = malloc(size + 1);
	if (!fs->text)
		abort();
	memcpy(fs->text, data, size);
	fs->text[size] = 0;
	size_t scene_len = size;
	char *mark = strstr(fs->text, "\n//set\n");
	if (mark && (size_t)(mark - fs->text) < size) {
		scene_len = (size_t)(mark - fs->text) + 1;
		char *p = mark + 7;
		while (*p && fs->nsets < FUZZ_MAX_SETS) {
			char *nl = strchr(p, '\n');
			if (nl)
				*nl = 0;
			fs->sets[fs->nsets++] = p;
			if (!nl)
				break;
			p = nl + 1;
		}
	}
	fs->path = fuzz_file("scene.json", data, scene_len);
}

#endif
