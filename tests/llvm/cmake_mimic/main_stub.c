/* The program's main() lives in override_check.cpp (inside the mimic's static library);
 * this file only gives the executable target a source. */
int mlbc_override_mimic_unused(void);
int mlbc_override_mimic_unused(void) { return 0; }
