// modebench-cli entry point: registers every command and maps failures to exit codes.
#include "cli/command_util.h"

#include <iostream>
#include <new>
#include <string>

int main(int argc, char** argv) {
    CLI::App app{"ModeBench command line: run, inspect and benchmark LLMs in fast and regular serving modes",
                 "modebench-cli"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("modebench-cli 0.1.0"));
    app.footer("Run 'modebench-cli COMMAND --help' for the options of a command.");
    mb::cli::addGenerateCommand(app);
    mb::cli::addTokenizeCommand(app);
    mb::cli::addInfoCommand(app);
    mb::cli::addMakeModelCommand(app);
    mb::cli::addDevicesCommand(app);
    mb::cli::addCompareCommand(app);
    mb::cli::addQuantizeCommand(app);
    mb::cli::addBenchCommand(app);
    mb::cli::addPerplexityCommand(app);
    mb::cli::addComparePrecisionCommand(app);
#ifdef MODEBENCH_HAVE_STORE
    mb::cli::addRunsCommand(app);
#endif
#ifdef MODEBENCH_HAVE_HTTP
    mb::cli::addServeCommand(app);
#endif
#ifdef MODEBENCH_HAVE_STORE
    mb::cli::addSelectCommand(app);
    mb::cli::addReportCommand(app);
    mb::cli::addMigrateCommand(app);
    mb::cli::addPluginsCommand(app);
#endif
    if (argc > 1 && argv[1][0] != '-') {
        const auto known = app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == argv[1]; });
        if (known.empty()) {
            std::cerr << "modebench-cli: error: unknown command '" << argv[1] << "' (see --help)\n";
            return 2;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "modebench-cli: error: " << e.what() << " (see --help)\n";
        return 2;
    } catch (const mb::cli::RunFailed& e) {
        std::cerr << "modebench-cli: " << e.what() << '\n';
        return 1;
    } catch (const std::bad_alloc&) {
        // Whatever ran out is named by the command; a what() of "std::bad_alloc" says nothing.
        const auto ran = app.get_subcommands();
        const std::string command = ran.empty() ? std::string("the command") : "'" + ran.front()->get_name() + "'";
        std::cerr << "modebench-cli: error: out of memory while running " << command
                  << " (a smaller workload, model, context or --threads may fit)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "modebench-cli: error: " << e.what() << '\n';
        return 2;
    }
    return 0;
}
