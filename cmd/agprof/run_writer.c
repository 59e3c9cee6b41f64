/* run_writer.c - placeholder */
int agprof_run_writer_placeholder;
