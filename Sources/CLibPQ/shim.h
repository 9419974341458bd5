#pragma once
#include <libpq-fe.h>

// The PG_DIAG_* field codes are character-literal macros ('C', 'M', ...), which Swift does not
// import; PQresultErrorField takes them as int.
static inline int clibpq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int clibpq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int clibpq_diag_message_detail(void) { return PG_DIAG_MESSAGE_DETAIL; }
static inline int clibpq_diag_constraint_name(void) { return PG_DIAG_CONSTRAINT_NAME; }
static inline int clibpq_diag_severity(void) { return PG_DIAG_SEVERITY_NONLOCALIZED; }
