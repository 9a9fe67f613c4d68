# Reference values for ragcov's CR2 + Satterthwaite intervals, produced with R clubSandwich.
# Run from this folder:  Rscript clubsandwich_cr2.R
# Writes cr2_data.csv (dataset, cluster, y: the generated per-query values) and
# cr2_reference.csv (dataset, model, estimate, se, df, low, high) read by tests/eval/test_cr2_reference.py.
suppressPackageStartupMessages(library(clubSandwich))
set.seed(20240611)

make <- function(name, sizes, rates, continuous = FALSE) {
  cl <- rep(seq_along(sizes), sizes)
  p <- rep(rates, sizes)
  y <- if (continuous) pmin(1, rbeta(length(p), 1 + 4 * p, 5 - 4 * p) * (runif(length(p)) < 0.8))
       else as.numeric(runif(length(p)) < p)
  data.frame(dataset = name, cluster = sprintf("d%03d", cl), y = y)
}

data <- rbind(
  make("unequal", c(3, 5, 8, 12, 20, 4, 7, 30, 15, 40, 6, 9), runif(12, 0, 0.7)),
  make("heavy_tailed", pmax(2, round(exp(rnorm(20, 2, 1.2)))), rbeta(20, 0.6, 1.8)),
  make("many_zero", c(10, 25, 4, 60, 8, 12, 30, 5, 18, 7, 40, 9, 22, 6, 14),
       c(rep(0, 10), runif(5, 0.2, 0.9))),
  make("k5", c(4, 17, 9, 33, 6), c(0.1, 0.5, 0.0, 0.3, 0.8)),
  make("dominant", c(500, 5, 6, 4, 8, 5, 7, 3), c(0.15, runif(7, 0, 1))),
  make("continuous", c(6, 11, 3, 25, 14, 8, 19, 5, 10, 13), runif(10, 0, 1), continuous = TRUE)
)
write.csv(data, "cr2_data.csv", row.names = FALSE)

rows <- list()
for (name in unique(data$dataset)) {
  d <- data[data$dataset == name, ]
  # micro: OLS y ~ 1, one row per query, clustered by document
  fit <- lm(y ~ 1, data = d)
  V <- vcovCR(fit, cluster = d$cluster, type = "CR2")
  ct <- coef_test(fit, vcov = V, test = "Satterthwaite")
  ci <- conf_int(fit, vcov = V, test = "Satterthwaite", level = 0.95)
  rows[[length(rows) + 1]] <- data.frame(dataset = name, model = "micro_ols", estimate = ct$beta,
    se = ct$SE, df = ct$df_Satt, low = ci$CI_L, high = ci$CI_U)
  # macro: cluster-level regression of per-document rates p_d ~ 1 (one row per document)
  agg <- aggregate(y ~ cluster, data = d, FUN = mean)
  fit2 <- lm(y ~ 1, data = agg)
  V2 <- vcovCR(fit2, cluster = agg$cluster, type = "CR2")
  ct2 <- coef_test(fit2, vcov = V2, test = "Satterthwaite")
  ci2 <- conf_int(fit2, vcov = V2, test = "Satterthwaite", level = 0.95)
  rows[[length(rows) + 1]] <- data.frame(dataset = name, model = "macro_cluster_level", estimate = ct2$beta,
    se = ct2$SE, df = ct2$df_Satt, low = ci2$CI_L, high = ci2$CI_U)
  # for the record: WLS y ~ 1 with weights 1 / n_d per query (same point estimate as macro)
  d$w <- 1 / ave(d$y, d$cluster, FUN = length)
  fit3 <- lm(y ~ 1, data = d, weights = w)
  V3 <- vcovCR(fit3, cluster = d$cluster, type = "CR2")
  ct3 <- coef_test(fit3, vcov = V3, test = "Satterthwaite")
  ci3 <- conf_int(fit3, vcov = V3, test = "Satterthwaite", level = 0.95)
  rows[[length(rows) + 1]] <- data.frame(dataset = name, model = "macro_wls_query_level", estimate = ct3$beta,
    se = ct3$SE, df = ct3$df_Satt, low = ci3$CI_L, high = ci3$CI_U)
}
out <- do.call(rbind, rows)
write.csv(format(out, digits = 15), "cr2_reference.csv", row.names = FALSE, quote = FALSE)
cat("clubSandwich", as.character(packageVersion("clubSandwich")), "\n")
print(out)
