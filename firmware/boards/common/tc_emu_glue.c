/* tinycompile board support: newlib glue for emulator builds linked with -nostartfiles. */
void _init(void);
void _fini(void);

void _init(void) {}

void _fini(void) {}
