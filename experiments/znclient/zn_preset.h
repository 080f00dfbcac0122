/*
 * The ZnClient experiment: named configurations (--preset, --with-preset), the knobs of
 * the three cells (logging off, on, subscriber) of one world, found by --fit and kept by
 * name so that scripts can call them.
 */
#ifndef STVM_ZNCLIENT_PRESET_H
#define STVM_ZNCLIENT_PRESET_H

#include "zn_measure.h"

typedef struct zn_preset {
    const char *name;
    const char *what;               /* a sentence for --help and the report */
    zn_config cfg;                  /* the subscriber cell's knobs (logging ignored) */
} zn_preset;

/* The presets, and their names for the option table (NULL-terminated, "none" first). */
extern const zn_preset zn_presets[];
extern const char *const zn_preset_words[];

/* The preset of --preset's word (0 = none: NULL). */
const zn_preset *zn_preset_get(int word);

#endif
