/* uuidkit._speedups: timestamp_datetime, the embedded time as an aware UTC datetime.
 *
 * The pure twin adds a timedelta to the epoch; here the datetime is built directly from its
 * integer parts (the civil date of a day count, then hours to microseconds), exactly as the
 * twin's result: truncated toward the past to the microsecond. Every value outside the fast
 * path (another version, a year outside 1-9999, not an exact uuid.UUID) is the twin's.
 * The datetime module is imported on the first call, never at `import uuidkit`.
 *
 * References: RFC 9562 §5.1, §5.6, §5.7, §6.1.
 */
#include "_speedups.h"

#include "datetime.h"

#define US_PER_DAY 86400000000LL
/* Days from 0000-03-01 (a year that begins after its leap day) to 1970-01-01. */
#define DAYS_TO_UNIX_EPOCH 719468LL
#define DAYS_PER_400_YEARS 146097LL

static long long floor_div(long long numerator, long long denominator)
{
    long long quotient = numerator / denominator;
    return quotient - (numerator % denominator < 0);
}

/* The proleptic Gregorian date of a day count since 1970-01-01. Years are counted from
   March, so the leap day is the last day of a year: 400-year eras of 146,097 days, in each
   a year of 365 days plus one every 4 years, less one every 100, plus one every 400. */
static void civil_date(long long days, int *year, int *month, int *day)
{
    long long shifted = days + DAYS_TO_UNIX_EPOCH;
    long long era = floor_div(shifted, DAYS_PER_400_YEARS);
    long long day_of_era = shifted - era * DAYS_PER_400_YEARS; /* 0..146096 */
    long long year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    long long day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    long long month_from_march = (5 * day_of_year + 2) / 153; /* 0 = March .. 11 = February */
    *day = (int)(day_of_year - (153 * month_from_march + 2) / 5 + 1);
    *month = (int)(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
    *year = (int)(year_of_era + era * 400 + (*month <= 2));
}

PyObject *uk_timestamp_datetime(PyObject *module, PyObject *u)
{
    (void)module;
    long long ns;
    if (!uk_time_ns(u, &ns)) {
        return uk_delegate(UK_FB_TIMESTAMP_DATETIME, &u, 1, NULL);
    }
    long long micros = floor_div(ns, 1000); /* datetime holds microseconds: toward the past */
    long long days = floor_div(micros, US_PER_DAY);
    long long of_day = micros - days * US_PER_DAY;
    int year, month, day;
    civil_date(days, &year, &month, &day);
    if (year < 1 || year > 9999) { /* outside datetime: the twin raises InvalidField */
        return uk_delegate(UK_FB_TIMESTAMP_DATETIME, &u, 1, NULL);
    }
    if (PyDateTimeAPI == NULL) {
        PyDateTime_IMPORT;
        if (PyDateTimeAPI == NULL) {
            return NULL;
        }
    }
    long long seconds = of_day / 1000000;
    return PyDateTimeAPI->DateTime_FromDateAndTime(
        year, month, day, (int)(seconds / 3600), (int)(seconds / 60 % 60), (int)(seconds % 60),
        (int)(of_day % 1000000), PyDateTime_TimeZone_UTC, PyDateTimeAPI->DateTimeType);
}
